// Where a class stands against what the course built: every timed submission's op-time sum at the
// ranking batch (10,000) as a dot on a log axis (a strip, spread up and down so equal times stay
// visible), and the course's variants and cuDNN from reference.json as labelled vertical lines.
// Without a reference the title says why there are no lines.
#pragma once

#include <qcustomplot.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>
#include "ui/charts/styled_plot.h"

namespace convscope::ui {

class ClassDistributionChart : public StyledPlot {
  Q_OBJECT

 public:
  explicit ClassDistributionChart(QWidget* parent = nullptr);

  struct Point {
    std::string id;
    double seconds = 0.0;
  };
  struct ReferenceLine {
    QString name;
    double seconds = 0.0;
  };
  // `rows`: a leaderboard group's rows (id, opTimeSeconds); `reference`: its reference.json or
  // null; `noReferenceReason`: what the title says when there is none.
  void setGroup(const std::vector<nlohmann::json>& rows, const nlohmann::json& reference,
                const QString& noReferenceReason);

  const std::vector<Point>& points() const { return points_; }
  const std::vector<ReferenceLine>& referenceLines() const { return lines_; }
  // The tooltip of the dot nearest `position` (widget pixels), empty when none is near.
  QString pointToolTip(const QPoint& position) const;

  // A plot of 120 px or more (tests/ui/test_layout.cpp) under a title on two lines, at the font.
  QSize minimumSizeHint() const override { return {320, 4 * fontMetrics().height() + 170}; }

 private:
  QString toolTipAt(const QPoint& position) const override { return pointToolTip(position); }
  void styleChanged(QEvent::Type) override { rebuild(); }
  void laidOut() override;
  void rebuild();
  // The reference lines' names, each on the first row under the title where it overlaps no other
  // and stays inside the plot (right-aligned at the right edge); a name with no such row is left
  // out and told by the line's tooltip. Needs the laid-out axes: after a replot and a resize.
  void placeLineLabels();
  std::vector<QCPItemText*> lineLabels_;  // parallel to lines_

  std::vector<Point> points_;
  std::vector<ReferenceLine> lines_;
  QString note_;
};

}  // namespace convscope::ui
