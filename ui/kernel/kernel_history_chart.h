// The student's staircase: the op time of each version of their kernel (the sum over the conv
// layers at batch 10,000, else at the largest batch timed), version after version. Passed versions
// are green discs joined by a step line; a version that failed its check is a red cross at the
// time it was given, or in the "not timed" row under the time axis when it has none; a version not
// yet timed is a hollow gray circle in that row. The figures are the history's (kernel_history.h); this only draws
// them.
#pragma once

#include <qcustomplot.h>

#include <optional>
#include <vector>

#include "app/core/conv/kernel_history.h"
#include "ui/charts/styled_plot.h"

namespace convscope::ui {

class KernelHistoryChart : public StyledPlot {
  Q_OBJECT

 public:
  enum class PointKind { Passed, Failed, Untimed };
  struct Point {
    int version = 0;
    PointKind kind = PointKind::Untimed;
    std::optional<double> milliseconds;  // the charted op time, when timed
    int batch = 0;
  };

  explicit KernelHistoryChart(QWidget* parent = nullptr);

  void setVersions(const std::vector<KernelVersion>& versions);
  const std::vector<Point>& points() const { return points_; }  // what is drawn, one per version

  // A plot of 240 x 120 or more beside its axes, under a title on two lines, at the chart's font.
  QSize minimumSizeHint() const override { return {320, 4 * fontMetrics().height() + 170}; }

 private:
  QString toolTipAt(const QPoint& position) const override;
  void styleChanged(QEvent::Type) override { rebuild(); }
  void rebuild();

  std::vector<Point> points_;
};

}  // namespace convscope::ui
