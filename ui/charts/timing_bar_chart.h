// The variants side by side at one batch size, in course order: a row of bars per variant
// (names along the left axis, however many there are), one bar per conv layer. By default the time
// axis is linear, so a bar twice as long is twice as slow, unless the times span more than 100x
// (a CPU variant beside the GPU ones): a linear axis would then shrink the fast bars to nothing, so
// it turns logarithmic and its label says so and why. The user can fix either scale. Pointing at a
// bar says what it is.
#pragma once

#include <qcustomplot.h>

#include <memory>

#include "app/core/engine/benchmark.h"
#include "ui/charts/styled_plot.h"

namespace convscope::ui {

class TimingBarChart : public StyledPlot {
  Q_OBJECT

 public:
  explicit TimingBarChart(QWidget* parent = nullptr);

  void setReport(std::shared_ptr<const BenchmarkReport> report);
  void setBatch(int batch);
  int batch() const { return batch_; }
  enum class TimeAxis { Automatic, Linear, Logarithmic };
  // Automatic: logarithmic where the longest bar is more than this many times the shortest.
  static constexpr double kLogarithmicAboveSpan = 100.0;
  void setTimeAxis(TimeAxis choice);
  TimeAxis timeAxis() const { return choice_; }
  void setLogarithmic(bool logarithmic);             // the user's choice: that scale, whatever the times
  bool logarithmic() const { return logarithmic_; }  // the scale shown now
  // Bars per conv layer (the plottables), and the variants along the axis.
  int layerBarCount() const { return plottableCount(); }
  const std::vector<std::string>& variants() const { return variants_; }
  // The tooltip of the bar under `position` (widget pixels), empty when none is there.
  QString barToolTip(const QPoint& position) const;

  // QCustomPlot asks for room for every tick label; a splitter may squeeze the chart below that.
  QSize minimumSizeHint() const override { return {200, 160}; }

 signals:
  // The scale shown changed (an automatic choice, or the user's).
  void scaleChanged(bool logarithmic);

 private:
  QString toolTipAt(const QPoint& position) const override { return barToolTip(position); }
  void restyle() override;
  void fitTo(const QSize& size) override { fitCaption(size.width()); }
  void rebuild();
  bool logarithmicFor(double shortest, double longest) const;
  void setAxisScale(double shortest, double longest);

  std::shared_ptr<const BenchmarkReport> report_;
  int batch_ = 0;
  TimeAxis choice_ = TimeAxis::Automatic;
  bool logarithmic_ = false;
  std::vector<std::string> variants_;
  QStringList captionParts_;  // the time axis' caption, joined on one line or two (fitCaption)
  void fitCaption(int chartWidth);
  QCPBarsGroup* group_;
};

}  // namespace convscope::ui
