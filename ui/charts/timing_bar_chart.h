// The variants side by side at one batch size, in course order: a row of bars per variant
// (names along the left axis, however many there are), one bar per conv layer. The time axis is
// linear by default, so a bar twice as long is twice as slow; logarithmic on request (GPU and
// CPU variants differ by orders of magnitude), and the axis label says which. Pointing at a bar
// says what it is.
#pragma once

#include <qcustomplot.h>

#include <memory>

#include "app/core/engine/benchmark.h"

namespace convscope::ui {

class TimingBarChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit TimingBarChart(QWidget* parent = nullptr);

  void setReport(std::shared_ptr<const BenchmarkReport> report);
  void setBatch(int batch);
  int batch() const { return batch_; }
  void setLogarithmic(bool logarithmic);
  bool logarithmic() const { return logarithmic_; }
  // Bars per conv layer (the plottables), and the variants along the axis.
  int layerBarCount() const { return plottableCount(); }
  const std::vector<std::string>& variants() const { return variants_; }
  // The tooltip of the bar under `position` (widget pixels), empty when none is there.
  QString barToolTip(const QPoint& position) const;
  QString titleText() const;

  // QCustomPlot asks for room for every tick label; a splitter may squeeze the chart below that.
  QSize minimumSizeHint() const override { return {200, 160}; }

 protected:
  bool event(QEvent* event) override;
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void rebuild();
  void restyle();

  std::shared_ptr<const BenchmarkReport> report_;
  int batch_ = 0;
  bool logarithmic_ = false;
  std::vector<std::string> variants_;
  QStringList titleParts_;
  QCPTextElement* title_;
  QCPBarsGroup* group_;
};

}  // namespace convscope::ui
