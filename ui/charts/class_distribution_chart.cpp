#include "ui/charts/class_distribution_chart.h"

#include <QResizeEvent>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "app/core/grading/class_leaderboard.h"
#include "ui/charts/chart_style.h"

namespace convscope::ui {

namespace {

const std::string& rankingBatchKey() {
  static const std::string key = std::to_string(kGradeBatches.back());
  return key;
}

// The op-time sum at the ranking batch, when the object holds a positive one.
bool rankingSeconds(const nlohmann::json& object, double* seconds) {
  if (!object.is_object() || !object.contains("opTimeSeconds")) return false;
  const nlohmann::json& times = object["opTimeSeconds"];
  if (!times.is_object() || !times.contains(rankingBatchKey()) || !times[rankingBatchKey()].is_number()) return false;
  *seconds = times[rankingBatchKey()].get<double>();
  return std::isfinite(*seconds) && *seconds > 0.0;
}

// Spreads dots up and down the strip by their order (not at random: the picture is the same at
// every refresh), so that submissions with equal times stay visible.
double stripOffset(size_t index) {
  static const double offsets[] = {0.0, 0.25, -0.25, 0.5, -0.5, 0.125, -0.125, 0.375, -0.375};
  return offsets[index % std::size(offsets)];
}

}  // namespace

ClassDistributionChart::ClassDistributionChart(QWidget* parent) : StyledPlot(parent) {
  xAxis->setScaleType(QCPAxis::stLogarithmic);
  xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  xAxis->setNumberFormat("eb");
  xAxis->setNumberPrecision(0);
  // In milliseconds, as the table beside it.
  xAxis->setLabel(tr("conv op-time sum at batch %1 (ms, log scale)").arg(kGradeBatches.back()));
  yAxis->setVisible(false);
  yAxis->setRange(-1.0, 1.0 + 0.25);
  // Its least height is minimumSizeHint: a plot of 120 px under a two-line title at any font.
  rebuild();
}

void ClassDistributionChart::setGroup(const std::vector<nlohmann::json>& rows, const nlohmann::json& reference,
                                      const QString& noReferenceReason) {
  points_.clear();
  lines_.clear();
  for (const nlohmann::json& row : rows)
    if (double seconds = 0.0; rankingSeconds(row, &seconds))
      points_.push_back({row.value("id", std::string()), seconds});
  if (reference.is_object() && reference.contains("variants") && reference["variants"].is_array())
    for (const nlohmann::json& variant : reference["variants"])
      if (double seconds = 0.0; rankingSeconds(variant, &seconds))
        lines_.push_back(
            {QString::fromStdString(variant.value("displayName", variant.value("id", std::string()))), seconds});
  note_ = lines_.empty() ? noReferenceReason : QString();
  rebuild();
}

void ClassDistributionChart::rebuild() {
  clearGraphs();
  clearItems();
  lineLabels_.clear();  // the items they were
  titleParts_ = {
      tr("The class at batch %1: %n timed submission(s)", nullptr, int(points_.size())).arg(kGradeBatches.back())};
  if (!note_.isEmpty()) titleParts_ << note_;
  restyle();

  QCPGraph* dots = addGraph();
  dots->setLineStyle(QCPGraph::lsNone);
  // Blue dots under red reference lines (as leaderboard.html draws them), lighter on a dark
  // background (presentation mode's high contrast).
  const bool dark = palette().color(QPalette::Base).lightness() < 128;
  QColor dotColour = dark ? QColor(110, 180, 255) : QColor(31, 119, 180);
  dotColour.setAlpha(190);
  dots->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dotColour, dotColour, 9));
  // QCPGraph keeps its data sorted by x: the offsets follow the rank (the rows' order) instead.
  for (size_t i = 0; i < points_.size(); ++i) dots->addData(points_[i].seconds * 1e3, stripOffset(i));

  double low = 0.0, high = 0.0;
  bool any = false;
  const auto include = [&](double seconds) {
    low = any ? std::min(low, seconds) : seconds;
    high = any ? std::max(high, seconds) : seconds;
    any = true;
  };
  for (const Point& p : points_) include(p.seconds * 1e3);
  for (const ReferenceLine& line : lines_) include(line.seconds * 1e3);
  if (any)
    xAxis->setRange(low / 1.6, high * 1.6);
  else
    xAxis->setRange(1.0, 1000.0);

  const QColor lineColour = palette().color(QPalette::WindowText);
  for (size_t i = 0; i < lines_.size(); ++i) {
    auto* line = new QCPItemStraightLine(this);
    line->point1->setCoords(lines_[i].seconds * 1e3, 0.0);
    line->point2->setCoords(lines_[i].seconds * 1e3, 1.0);
    line->setPen(QPen(dark ? QColor(255, 110, 100) : QColor(214, 39, 40), 1.5, Qt::DashLine));
    auto* label = new QCPItemText(this);
    label->setText(lines_[i].name);
    label->setColor(lineColour);
    label->setFont(font());
    label->setPadding(QMargins(3, 0, 3, 0));
    lineLabels_.push_back(label);
  }
  replot();  // lays out the axes: the labels are placed in pixels
  placeLineLabels();
  replot();
}

void ClassDistributionChart::placeLineLabels() {
  const QRect plot = axisRect()->rect();
  if (plot.width() <= 0 || lineLabels_.size() != lines_.size()) return;
  const QFontMetrics metrics(font());
  const int rowHeight = metrics.height() + 1;
  const int rows = std::max(1, (plot.height() - 4) / rowHeight);
  std::vector<std::vector<std::pair<double, double>>> taken(static_cast<size_t>(rows));
  // Left to right, so that the rows fill as a reader scans them.
  std::vector<size_t> order(lines_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lines_[a].seconds < lines_[b].seconds; });
  for (size_t i : order) {
    QCPItemText* label = lineLabels_[i];
    const double x = xAxis->coordToPixel(lines_[i].seconds * 1e3);
    const double width = metrics.horizontalAdvance(label->text()) + 6;
    const bool rightAligned = x + width > plot.right();
    const double left = rightAligned ? x - width : x;
    int row = -1;
    for (int r = 0; r < rows && row < 0; ++r) {
      bool free = left >= plot.left();
      for (const auto& [from, to] : taken[static_cast<size_t>(r)]) free = free && (left + width < from || left > to);
      if (free) row = r;
    }
    label->setVisible(row >= 0);
    if (row < 0) continue;
    taken[static_cast<size_t>(row)].push_back({left, left + width});
    label->setPositionAlignment((rightAligned ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    label->position->setCoords(lines_[i].seconds * 1e3, yAxis->pixelToCoord(plot.top() + 2 + row * rowHeight));
  }
}

QString ClassDistributionChart::pointToolTip(const QPoint& position) const {
  const QCPGraph* dots = const_cast<ClassDistributionChart*>(this)->graph(0);
  if (!dots) return {};
  double best = 12.0;
  QString text;
  // A reference line under the pointer: its name (it may have had no room for a label).
  for (const ReferenceLine& line : lines_)
    if (std::abs(xAxis->coordToPixel(line.seconds * 1e3) - position.x()) <= 3.0)
      text = tr("%1: %2 ms").arg(line.name).arg(line.seconds * 1e3, 0, 'g', 4);
  for (size_t i = 0; i < points_.size(); ++i) {
    const double px = xAxis->coordToPixel(points_[i].seconds * 1e3), py = yAxis->coordToPixel(stripOffset(i));
    const double distance = std::hypot(px - position.x(), py - position.y());
    if (distance < best) {
      best = distance;
      text = tr("%1: %2 ms").arg(QString::fromStdString(points_[i].id)).arg(points_[i].seconds * 1e3, 0, 'g', 4);
    }
  }
  return text;
}

void ClassDistributionChart::laidOut() {
  // The labels' rows follow the new width and height once the axes are laid out again.
  QTimer::singleShot(0, this, [this] {
    replot(rpImmediateRefresh);
    placeLineLabels();
    replot(rpQueuedReplot);
  });
}

}  // namespace convscope::ui
