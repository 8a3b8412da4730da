#include "ui/charts/roofline_chart.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/chart_style.h"

namespace convscope::ui {
namespace {

const QCPScatterStyle::ScatterShape kMachineShapes[] = {QCPScatterStyle::ssDisc, QCPScatterStyle::ssSquare,
                                                        QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
                                                        QCPScatterStyle::ssCross};

QCPScatterStyle::ScatterShape machineShape(int machine) {
  return kMachineShapes[static_cast<size_t>(machine) % std::size(kMachineShapes)];
}

QString timesText(double factor) {
  return QStringLiteral("×%1").arg(factor, 0, 'f', factor < 10.0 ? 1 : 0);
}

}  // namespace

RooflineChart::RooflineChart(QWidget* parent) : StyledPlot(parent) {
  for (QCPAxis* axis : {xAxis, yAxis}) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setSubTickCount(8);
    axis->setTicker(ticker);
    axis->setNumberFormat("gb");
    axis->setNumberPrecision(0);
  }
  xAxis->setLabel(tr("arithmetic intensity (FLOP per byte the variant moves)"));
  yAxis->setLabel(tr("achieved GFLOP/s"));
  // The legend goes under the chart, in rows, where it hides no point.
  legend->setVisible(true);
  auto* legendRow = new QCPLayoutGrid;
  plotLayout()->addElement(2, 0, legendRow);
  plotLayout()->setRowStretchFactor(2, 0.001);
  axisRect()->insetLayout()->take(legend);
  legendRow->addElement(0, 0, legend);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(4);
  legendRow->setMargins(QMargins(0, 0, 0, 4));
  setMinimumHeight(200);
  // Labels are placed in pixels, so each time the layout gives the axes their size.
  connect(this, &QCustomPlot::afterLayout, this, &RooflineChart::placeFloorLabels);
  rebuild();
}

void RooflineChart::placeFloorLabels() {
  // Greedy: the points nearest their floor first (the ones a lesson talks about), each label at the
  // first of eight places around its point that stays inside the axes and clear of every point and
  // of the labels placed before it; a label with no such place is hidden (pointing at the point
  // still tells it). Markers are about 9 px: a point keeps a 12 px square clear.
  const QRect inside = axisRect()->rect();
  std::vector<QRectF> taken;
  for (size_t i = 0; i < points_.size(); ++i) {
    const QPointF at = pointPosition(static_cast<int>(i));
    taken.emplace_back(at.x() - 6, at.y() - 6, 12, 12);
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < floorLabels_.size(); ++i)
    if (floorLabels_[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [this](size_t a, size_t b) { return points_[a].point.timesFloor < points_[b].point.timesFloor; });
  hiddenFloorLabels_ = 0;
  for (size_t i : order) {
    QCPItemText* label = floorLabels_[i];
    const QFontMetricsF metrics(label->font());
    const QSizeF size(metrics.horizontalAdvance(label->text()) + 2, metrics.height());
    const QPointF at = pointPosition(static_cast<int>(i));
    const double gap = 7;
    const QPointF places[] = {
        {at.x() + gap, at.y() - size.height() / 2},                   // right
        {at.x() - gap - size.width(), at.y() - size.height() / 2},    // left
        {at.x() - size.width() / 2, at.y() - gap - size.height()},    // above
        {at.x() - size.width() / 2, at.y() + gap},                    // below
        {at.x() + gap, at.y() - gap - size.height()},                 // upper right
        {at.x() + gap, at.y() + gap},                                 // lower right
        {at.x() - gap - size.width(), at.y() - gap - size.height()},  // upper left
        {at.x() - gap - size.width(), at.y() + gap},                  // lower left
    };
    bool placed = false;
    for (const QPointF& place : places) {
      const QRectF box(place, size);
      if (!QRectF(inside).contains(box)) continue;
      if (std::any_of(taken.begin(), taken.end(), [&](const QRectF& other) { return other.intersects(box); })) continue;
      label->position->setPixelPosition(place);
      taken.push_back(box);
      placed = true;
      break;
    }
    label->setVisible(placed);
    hiddenFloorLabels_ += !placed;
  }
}

std::vector<QRectF> RooflineChart::floorLabelBoxes() const {
  std::vector<QRectF> boxes;
  for (QCPItemText* label : floorLabels_)
    if (label && label->visible()) {
      const QFontMetricsF metrics(label->font());
      boxes.emplace_back(label->position->pixelPosition(),
                         QSizeF(metrics.horizontalAdvance(label->text()) + 2, metrics.height()));
    }
  return boxes;
}

void RooflineChart::setMachines(std::vector<RooflineMachine> machines) {
  machines_ = std::move(machines);
  selected_ = -1;
  rebuild();
}

void RooflineChart::setLayer(int layer) {
  layer_ = layer;
  selected_ = -1;
  rebuild();
}

void RooflineChart::setBatch(int batch) {
  batch_ = batch;
  selected_ = -1;
  rebuild();
}

int RooflineChart::batchFor(const BenchmarkReport& report) const {
  const std::vector<int> batches = batchesIn(report);
  if (batches.empty()) return 0;
  if (batch_ > 0 && std::find(batches.begin(), batches.end(), batch_) != batches.end()) return batch_;
  return batches.back();
}

void RooflineChart::rebuild() {
  clearPlottables();
  clearItems();
  floorLabels_.clear();
  marker_ = nullptr;
  selectedLabel_ = nullptr;
  points_.clear();
  roofs_ = 0;
  double lowI = INFINITY, highI = 0.0, lowF = INFINITY, highF = 0.0;
  std::set<std::string> named;  // variants already in the legend
  QStringList batches;
  for (size_t m = 0; m < machines_.size(); ++m) {
    const BenchmarkReport& report = *machines_[m].report;
    const DeviceCeilings ceilings = ceilingsFor(report);
    const int batch = batchFor(report);
    batches << QString::number(batch);
    for (const RooflinePoint& point : rooflinePoints(report, ceilings, batch)) {
      if (layer_ >= 0 && point.layer != layer_) continue;
      points_.push_back({static_cast<int>(m), point});
      lowI = std::min(lowI, point.intensity);
      highI = std::max(highI, point.intensity);
      lowF = std::min(lowF, point.flopsPerSecond / 1e9);
      highF = std::max(highF, point.flopsPerSecond / 1e9);
    }
    if (ceilings.known()) {
      lowF = std::min(lowF, ceilings.fp32FlopsPerSecond / 1e9 / 1000.0);
      highF = std::max(highF, ceilings.tf32FlopsPerSecond / 1e9);
    }
  }
  // One graph per (machine, variant): its colour the variant's, its shape the machine's.
  for (size_t m = 0; m < machines_.size(); ++m) {
    for (const std::string& variant : variantsInCourseOrder(*machines_[m].report)) {
      QVector<double> x, y;
      for (const Plotted& p : points_)
        if (p.machine == static_cast<int>(m) && p.point.variant == variant) {
          x.push_back(p.point.intensity);
          y.push_back(p.point.flopsPerSecond / 1e9);
        }
      if (x.isEmpty()) continue;
      QCPGraph* graph = addGraph();
      graph->setLineStyle(QCPGraph::lsNone);
      graph->setScatterStyle(
          QCPScatterStyle(machineShape(static_cast<int>(m)), variantColour(variant), variantColour(variant), 9));
      graph->setData(x, y);
      graph->setName(variantDisplayName(variant));
      // The legend names each variant once (its colour) and each machine once (its shape, below).
      if (!named.insert(variant).second) graph->removeFromLegend();
    }
  }
  if (highI <= 0.0) {
    lowI = 0.1;
    highI = 100.0;
  }
  const double left = std::pow(10.0, std::floor(std::log10(lowI / 2.0)));
  const double right = std::pow(10.0, std::ceil(std::log10(highI * 2.0)));
  // The roofs: bandwidth × intensity up to each peak, named by machine where several have them.
  int machinesWithRoofs = 0;
  for (const RooflineMachine& machine : machines_) machinesWithRoofs += ceilingsFor(*machine.report).known();
  for (size_t m = 0; m < machines_.size(); ++m) {
    const DeviceCeilings ceilings = ceilingsFor(*machines_[m].report);
    if (!ceilings.known()) continue;
    const std::pair<double, QString> peaks[] = {{ceilings.fp32FlopsPerSecond, tr("FP32")},
                                                {ceilings.tf32FlopsPerSecond, tr("TF32")}};
    for (const auto& [peak, name] : peaks) {
      if (peak <= 0.0) continue;
      const double ridge = peak / ceilings.bytesPerSecond;
      QCPGraph* roof = addGraph();
      roof->setData({left, ridge, std::max(right, ridge * 2.0)},
                    {left * ceilings.bytesPerSecond / 1e9, peak / 1e9, peak / 1e9});
      QPen pen(palette().color(QPalette::Text), 1.5, name == tr("FP32") ? Qt::SolidLine : Qt::DashLine);
      roof->setPen(pen);
      roof->setName(tr("%1roof, %2: %3 GB/s, %4 TFLOP/s")
                        .arg(machinesWithRoofs > 1 ? machines_[m].label + " " : QString(), name)
                        .arg(ceilings.bytesPerSecond / 1e9, 0, 'f', 0)
                        .arg(peak / 1e12, 0, 'f', 1));
      ++roofs_;
    }
  }
  // Several machines: each one's marker shape, drawn as an outline in the text colour (a shape, not
  // a colour of any variant), named in the legend. One machine needs no key: the panel names it.
  if (machines_.size() > 1)
    for (size_t m = 0; m < machines_.size(); ++m) {
      QCPGraph* key = addGraph();
      key->setLineStyle(QCPGraph::lsNone);
      key->setScatterStyle(QCPScatterStyle(machineShape(static_cast<int>(m)),
                                           QPen(palette().color(QPalette::Text), 1.5), Qt::NoBrush, 9));
      key->setName(
          tr("%1 (batch %2): points of this shape").arg(machines_[m].label, batches.value(static_cast<int>(m))));
    }
  // × of floor beside each point, placed where it overlaps no other label and no point
  // (placeFloorLabels, once the axes have their pixels).
  floorLabels_.assign(points_.size(), nullptr);
  for (size_t i = 0; i < points_.size(); ++i) {
    const Plotted& p = points_[i];
    if (p.point.timesFloor <= 0.0) continue;
    auto* label = new QCPItemText(this);
    label->position->setType(QCPItemPosition::ptAbsolute);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(timesText(p.point.timesFloor));
    label->setColor(variantColour(p.point.variant));
    floorLabels_[i] = label;
  }
  xAxis->setRange(left, right);
  if (highF <= 0.0) {
    lowF = 1.0;
    highF = 1000.0;
  }
  yAxis->setRange(std::pow(10.0, std::floor(std::log10(lowF / 2.0))),
                  std::pow(10.0, std::ceil(std::log10(highF * 2.0))));
  if (machines_.empty())
    titleParts_ = {tr("Roofline: open a benchmark JSON")};
  else
    titleParts_ = {tr("Roofline of %1")
                       .arg(layer_ >= 0 ? convLayerLabel(*machines_.front().report, layer_) : tr("every conv layer")),
                   tr("×N: N times its floor")};
  if (selected_ >= 0 && static_cast<size_t>(selected_) < points_.size()) selectPoint(selected_);
  restyle();
  replot(rpQueuedReplot);
}

QPoint RooflineChart::pointPosition(int index) const {
  const RooflinePoint& p = points_.at(static_cast<size_t>(index)).point;
  return QPointF(xAxis->coordToPixel(p.intensity), yAxis->coordToPixel(p.flopsPerSecond / 1e9)).toPoint();
}

int RooflineChart::pointAt(const QPoint& position) const {
  int best = -1;
  double bestDistance = 12.0 * 12.0;
  for (size_t i = 0; i < points_.size(); ++i) {
    const QPoint at = pointPosition(static_cast<int>(i));
    const double dx = at.x() - position.x(), dy = at.y() - position.y();
    if (dx * dx + dy * dy <= bestDistance) {
      bestDistance = dx * dx + dy * dy;
      best = static_cast<int>(i);
    }
  }
  return best;
}

QString RooflineChart::pointText(int index) const {
  if (index < 0 || static_cast<size_t>(index) >= points_.size()) return {};
  const Plotted& p = points_[static_cast<size_t>(index)];
  QString text = tr("%1 · %2 · %3, batch %4\n%5 FLOP/byte (%6 MB moved), %7 GFLOP/s, op time %8 ms")
                     .arg(variantDisplayName(p.point.variant), machines_[static_cast<size_t>(p.machine)].label,
                          QString::fromStdString(p.point.node))
                     .arg(p.point.batch)
                     .arg(p.point.intensity, 0, 'g', 4)
                     .arg(p.point.bytes / 1e6, 0, 'f', 1)
                     .arg(p.point.flopsPerSecond / 1e9, 0, 'f', 1)
                     .arg(p.point.seconds * 1e3, 0, 'g', 4);
  if (p.point.timesFloor > 0.0)
    text +=
        tr("\n%1 of its floor (%2 ms)").arg(timesText(p.point.timesFloor)).arg(p.point.floorSeconds * 1e3, 0, 'g', 4);
  if (p.point.variant != p.point.runVariant)
    text += tr("\nfell back from %1").arg(variantDisplayName(p.point.runVariant));
  return text;
}

void RooflineChart::selectPoint(int index) {
  if (index < 0 || static_cast<size_t>(index) >= points_.size()) return;
  selected_ = index;
  const RooflinePoint& p = points_[static_cast<size_t>(index)].point;
  if (!marker_) {
    marker_ = new QCPItemTracer(this);
    marker_->setStyle(QCPItemTracer::tsCircle);
    marker_->setSize(22);
  }
  marker_->position->setType(QCPItemPosition::ptPlotCoords);
  marker_->position->setCoords(p.intensity, p.flopsPerSecond / 1e9);
  marker_->setPen(QPen(palette().color(QPalette::Highlight), 2.5));
  if (!selectedLabel_) {
    selectedLabel_ = new QCPItemText(this);
    selectedLabel_->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
    selectedLabel_->position->setType(QCPItemPosition::ptAxisRectRatio);
    selectedLabel_->position->setCoords(0.01, 0.01);
    selectedLabel_->setTextAlignment(Qt::AlignLeft);
    selectedLabel_->setPadding(QMargins(6, 4, 6, 4));
  }
  selectedLabel_->setText(pointText(index));
  selectedLabel_->setColor(palette().color(QPalette::Text));
  selectedLabel_->setBrush(palette().color(QPalette::Base));
  selectedLabel_->setPen(QPen(palette().color(QPalette::Mid)));
  selectedLabel_->setFont(font());
  replot(rpQueuedReplot);
  emit pointSelected(index, pointText(index));
}

void RooflineChart::mousePressEvent(QMouseEvent* event) {
  const int index = pointAt(event->pos());
  if (index >= 0) selectPoint(index);
  QCustomPlot::mousePressEvent(event);
}

void RooflineChart::restyle() {
  StyledPlot::restyle();
  for (int i = 0; i < itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(item(i)); text && text != selectedLabel_) {
      QFont small = font();
      small.setPointSizeF(small.pointSizeF() * 0.85);
      text->setFont(small);
    }
}

void RooflineChart::fitTo(const QSize& size) {
  // As many legend columns as the widest entry allows: fewer rows leave the plot its height (in
  // presentation mode at 1440x900 four columns left it 197 px).
  int widest = 0;
  const QFontMetrics metrics(legend->font());
  for (int i = 0; i < legend->itemCount(); ++i)
    if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
      widest = std::max(widest, metrics.horizontalAdvance(entry->plottable()->name()));
  const int entryWidth = widest + legend->iconSize().width() + legend->iconTextPadding() + 16;
  const int columns = std::max(1, (size.width() - 16) / std::max(1, entryWidth));
  if (legend->wrap() != columns) {
    legend->setWrap(columns);
    legend->setFillOrder(legend->fillOrder(), true);  // re-flows the entries into the new columns
  }
}

}  // namespace convscope::ui
