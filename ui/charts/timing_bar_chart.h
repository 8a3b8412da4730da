// The variants side by side at one batch size: a row of bars per variant (names along the left
// axis, however many there are), one bar per conv layer, on a logarithmic time axis (GPU and CPU
// variants differ by orders of magnitude).
#pragma once

#include <qcustomplot.h>

#include <memory>

#include "engine/benchmark.h"

namespace convscope::ui {

class TimingBarChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit TimingBarChart(QWidget* parent = nullptr);

  void setReport(std::shared_ptr<const BenchmarkReport> report);
  void setBatch(int batch);
  int batch() const { return batch_; }
  // Bars per conv layer (the plottables), and the variants along the axis.
  int layerBarCount() const { return plottableCount(); }
  const std::vector<std::string>& variants() const { return variants_; }

  // QCustomPlot asks for room for every tick label; a splitter may squeeze the chart below that.
  QSize minimumSizeHint() const override { return {200, 160}; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuild();

  std::shared_ptr<const BenchmarkReport> report_;
  int batch_ = 0;
  std::vector<std::string> variants_;
  QCPTextElement* title_;
  QCPBarsGroup* group_;
};

}  // namespace convscope::ui
