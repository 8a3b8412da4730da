#include "ui/kernel/kernel_history_chart.h"

#include <algorithm>

#include "ui/charts/chart_style.h"

namespace convscope::ui {
namespace {

const QColor kPassed("#2ca02c");
const QColor kFailed("#d62728");
const QColor kUntimed("#7f7f7f");

// The time axis with one more row under zero, labelled "not timed", where the versions without a
// time sit: on the axis at zero they read as 0 ms (the walkthrough saw exactly that).
class TimeAxisWithUntimedRow : public QCPAxisTicker {
 public:
  void setRow(double row) { row_ = row; }

 protected:
  QVector<double> createTickVector(double tickStep, const QCPRange& range) override {
    QVector<double> ticks = QCPAxisTicker::createTickVector(tickStep, range);
    ticks.erase(std::remove_if(ticks.begin(), ticks.end(), [&](double t) { return t < -1e-9 * tickStep; }),
                ticks.end());
    ticks.prepend(row_);
    return ticks;
  }
  QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override {
    if (tick == row_) return KernelHistoryChart::tr("not timed");
    return QCPAxisTicker::getTickLabel(tick, locale, formatChar, precision);
  }

 private:
  double row_ = -1.0;
};

}  // namespace

KernelHistoryChart::KernelHistoryChart(QWidget* parent) : StyledPlot(parent) {
  xAxis->setLabel(tr("version"));
  yAxis->setLabel(tr("ms"));  // the title says what: a short caption fits a short plot
  QSharedPointer<QCPAxisTickerFixed> whole(new QCPAxisTickerFixed);
  whole->setTickStep(1.0);
  whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);  // many versions: every 2nd, 5th, ... labelled
  xAxis->setTicker(whole);
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  rebuild();
}

void KernelHistoryChart::setVersions(const std::vector<KernelVersion>& versions) {
  points_.clear();
  for (const KernelVersion& version : versions) {
    Point point;
    point.version = version.number;
    if (const std::optional<KernelOpTime> time = version.chartedOpTime()) {
      point.milliseconds = time->seconds * 1e3;
      point.batch = time->batch;
    }
    point.kind = version.checkPassed == false ? PointKind::Failed
                 : point.milliseconds         ? PointKind::Passed
                                              : PointKind::Untimed;
    points_.push_back(point);
  }
  rebuild();
}

void KernelHistoryChart::rebuild() {
  clearGraphs();
  const auto addGraph = [this](const QString& name, const QColor& colour, QCPScatterStyle::ScatterShape shape,
                               bool line) {
    QCPGraph* graph = QCustomPlot::addGraph();
    graph->setName(name);
    graph->setPen(line ? QPen(colour, 2) : QPen(colour));
    graph->setLineStyle(line ? QCPGraph::lsStepLeft : QCPGraph::lsNone);
    // A pen and a brush, not two colours: the empty circle must have no fill.
    graph->setScatterStyle(QCPScatterStyle(shape, QPen(colour, 1.5),
                                           shape == QCPScatterStyle::ssDisc ? QBrush(colour) : QBrush(Qt::NoBrush), 9));
    return graph;
  };
  QCPGraph* passed = addGraph(tr("passed"), kPassed, QCPScatterStyle::ssDisc, true);
  QCPGraph* failed = addGraph(tr("failed the check"), kFailed, QCPScatterStyle::ssCross, false);
  QCPGraph* untimed = addGraph(tr("not timed"), kUntimed, QCPScatterStyle::ssCircle, false);
  double highest = 0.0;
  for (const Point& point : points_) highest = std::max(highest, point.milliseconds.value_or(0.0));
  const double top = highest > 0.0 ? highest * 1.15 : 1.0;
  // Untimed and failed versions without a time sit in the "not timed" row under zero: they are
  // there, with no figure, and never read as 0 ms.
  const double untimedRow = -0.12 * top;
  for (const Point& point : points_) {
    const double y = point.milliseconds.value_or(untimedRow);
    (point.kind == PointKind::Passed   ? passed
     : point.kind == PointKind::Failed ? failed
                                       : untimed)
        ->addData(point.version, y);
  }
  const int first = points_.empty() ? 1 : points_.front().version;
  const int last = points_.empty() ? 1 : points_.back().version;
  xAxis->setRange(first - 0.5, last + 0.5);
  QSharedPointer<TimeAxisWithUntimedRow> ticker(new TimeAxisWithUntimedRow);
  ticker->setRow(untimedRow);
  yAxis->setTicker(ticker);
  yAxis->setRange(-0.2 * top, top);
  titleParts_ = points_.empty() ? QStringList{tr("No versions yet: each save that compiles adds one")}
                                : QStringList{tr("Op time over your versions"),
                                              tr("the sum of the conv layers at batch 10,000 where timed")};
  restyle();
  replot(rpQueuedReplot);
}

QString KernelHistoryChart::toolTipAt(const QPoint& position) const {
  const int version = static_cast<int>(std::lround(xAxis->pixelToCoord(position.x())));
  for (const Point& point : points_)
    if (point.version == version)
      return point.milliseconds
                 ? tr("v%1: %2 ms at batch %3").arg(version).arg(*point.milliseconds, 0, 'f', 3).arg(point.batch)
                 : tr("v%1: not timed").arg(version);
  return {};
}

}  // namespace convscope::ui
