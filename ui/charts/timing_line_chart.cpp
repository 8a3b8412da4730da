#include "ui/charts/timing_line_chart.h"

#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "app/core/conv/variant_table.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/chart_style.h"
#include "ui/common/presentation_mode.h"

namespace convscope::ui {

TimingLineChart::TimingLineChart(QWidget* parent) : StyledPlot(parent) {
  // Layout: the title across the top; under it the axes and, in a column of their own to the
  // right, the legend (with ten variants, a legend inside the axes would hide lines).
  QCPAxisRect* axes = axisRect();
  plotLayout()->take(axes);
  plotLayout()->simplify();
  auto* body = new QCPLayoutGrid;
  plotLayout()->addElement(1, 0, body);  // under the title
  body->addElement(0, 0, axes);
  // Where the chart is narrow the legend moves under the axes, in as many columns as fit
  // (placeLegend): beside them, ten long names would leave the lines a sliver.
  legendBeside_ = new QCPLayoutGrid;
  body->addElement(0, 1, legendBeside_);
  body->setColumnStretchFactor(1, 0.001);
  axes->insetLayout()->take(legend);
  legendBeside_->addElement(0, 0, legend);
  legendBeside_->addElement(1, 0, new QCPLayoutElement(this));  // pushes the legend to the top
  legendBeside_->setRowStretchFactor(0, 0.001);
  legendBeside_->setMargins(QMargins(0, 8, 8, 0));
  legendBelow_ = new QCPLayoutGrid;
  plotLayout()->addElement(2, 0, legendBelow_);
  legendBelow_->expandTo(1, 1);  // an empty cell for the legend (after adding: QCP visits cells then)
  plotLayout()->setRowStretchFactor(2, 0.001);
  legendBelow_->setMargins(QMargins(8, 0, 8, 4));
  body_ = body;
  for (QCPAxis* axis : {xAxis, yAxis}) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->grid()->setSubGridVisible(true);
  }
  QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
  ticker->setSubTickCount(8);
  yAxis->setTicker(ticker);
  yAxis->setNumberFormat("g");
  yAxis->setNumberPrecision(6);
  xAxis->setLabel(tr("batch size (images)"));
  yAxis->setLabel(tr("op time (ms)"));
  legend->setVisible(true);
  legend->setSelectableParts(QCPLegend::spNone);  // a click toggles a line; it selects nothing
  connect(this, &QCustomPlot::legendClick, this, [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
    auto* entry = qobject_cast<QCPPlottableLegendItem*>(item);
    if (!entry) return;
    for (int g = 0; g < graphCount(); ++g)
      if (graph(g) == entry->plottable()) setVariantShown(graphVariants_[static_cast<size_t>(g)], !graph(g)->visible());
  });
  setMinimumHeight(160);
  rebuild();
}

void TimingLineChart::setReport(std::shared_ptr<const BenchmarkReport> report) {
  report_ = std::move(report);
  if (report_ && layer_ >= static_cast<int>(convLayersIn(*report_).size())) layer_ = kAllConvLayers;
  rebuild();
}

namespace {

// A series' points (batch, op time in ms) into `graph`, widening [low, high] to hold them.
void plotSeries(QCPGraph& graph, const VariantSeries& series, double* low, double* high) {
  QVector<double> x, y;
  for (size_t i = 0; i < series.batches.size(); ++i) {
    x.push_back(series.batches[i]);
    y.push_back(series.seconds[i] * 1e3);
    *low = std::min(*low, y.back());
    *high = std::max(*high, y.back());
  }
  graph.setData(x, y, true);
}

}  // namespace

void TimingLineChart::setComparison(std::shared_ptr<const BenchmarkReport> comparison, const QString& label) {
  comparison_ = std::move(comparison);
  comparisonLabel_ = label;
  rebuild();
}

void TimingLineChart::setLayer(int layer) {
  layer_ = layer;
  rebuild();
}

void TimingLineChart::setVariantShown(const std::string& variant, bool shown) {
  if (shown)
    hidden_.erase(variant);
  else
    hidden_.insert(variant);
  restyle();
  replot(rpQueuedReplot);
}

void TimingLineChart::rebuild() {
  clearGraphs();
  variants_.clear();
  graphVariants_.clear();
  if (!report_ || report_->runs.empty()) {
    titleParts_ = {tr("Op time vs batch size: run a sweep or open a benchmark JSON")};
    QSharedPointer<QCPAxisTickerLog> logTicks(new QCPAxisTickerLog);
    xAxis->setTicker(logTicks);
    xAxis->setRange(1, 10000);
    yAxis->setRange(0.01, 1000);
    legend->setVisible(false);
    restyle();
    replot(rpQueuedReplot);
    return;
  }
  double low = INFINITY, high = 0.0;
  for (const VariantSeries& series : opTimeSeries(*report_, layer_)) {
    QCPGraph* graph = addGraph();
    graph->setName(variantDisplayName(series.variant));
    const VariantStyle style = variantStyle(series.variant);
    // Lines to see from the back of a room in presentation mode.
    graph->setPen(QPen(style.colour, presentationMode() ? 3.5 : 2.2, style.line));
    graph->setScatterStyle(
        QCPScatterStyle(static_cast<QCPScatterStyle::ScatterShape>(style.marker), style.colour, style.colour, 8));
    plotSeries(*graph, series, &low, &high);
    variants_.push_back(series.variant);
    graphVariants_.push_back(series.variant);
  }
  // The other machine's lines after the report's (variants_ indexes only the report's graphs).
  comparisonGraphs_ = 0;
  std::vector<QCPGraph*> comparisonGraphs;
  const bool comparable = comparison_ && !comparison_->runs.empty();
  const int comparisonLayer =
      comparable ? std::min(layer_, static_cast<int>(convLayersIn(*comparison_).size()) - 1) : kAllConvLayers;
  const std::vector<VariantSeries> others =
      comparable ? opTimeSeries(*comparison_, comparisonLayer) : std::vector<VariantSeries>{};
  if (comparable)
    for (const std::string& variant : variantsInCourseOrder(*comparison_))
      for (const VariantSeries& series : others)
        if (series.variant == variant) {
          QCPGraph* graph = addGraph();
          graph->setName(variantDisplayName(series.variant) + QStringLiteral(" · ") + comparisonLabel_);
          const VariantStyle style = variantStyle(series.variant);
          graph->setPen(QPen(style.colour, presentationMode() ? 2.0 : 1.2, style.line));
          graph->setScatterStyle(QCPScatterStyle(static_cast<QCPScatterStyle::ScatterShape>(style.marker),
                                                 QPen(style.colour, 1.5), Qt::NoBrush, 9));
          plotSeries(*graph, series, &low, &high);
          comparisonGraphs.push_back(graph);
          graphVariants_.push_back(series.variant);
          ++comparisonGraphs_;
        }
  // The legend in course order (the registry's), the order the class meets the optimizations in,
  // whatever order the file lists them in.
  legend->clearItems();
  for (const std::string& variant : variantsInCourseOrder(*report_)) {
    const auto at = std::find(variants_.begin(), variants_.end(), variant);
    if (at != variants_.end()) legend->addItem(new QCPPlottableLegendItem(legend, graph(int(at - variants_.begin()))));
  }
  for (QCPGraph* other : comparisonGraphs) legend->addItem(new QCPPlottableLegendItem(legend, other));

  // The batch sizes measured are the ticks: a student reads "1000", not "10^3".
  std::vector<int> batches = batchesIn(*report_);
  if (comparable)
    for (int batch : batchesIn(*comparison_))
      if (std::find(batches.begin(), batches.end(), batch) == batches.end()) batches.push_back(batch);
  std::sort(batches.begin(), batches.end());
  QSharedPointer<QCPAxisTickerText> batchTicks(new QCPAxisTickerText);
  for (int batch : batches) batchTicks->addTick(batch, QString::number(batch));
  xAxis->setTicker(batchTicks);
  xAxis->setRange(batches.front() / 1.6, batches.back() * 1.6);
  if (high > 0.0) yAxis->setRange(low / 2.5, high * 2.5);
  legend->setVisible(true);
  titleParts_ = {tr("Op time vs batch size"), convLayerLabel(*report_, layer_),
                 tr("%1 on %2").arg(QString::fromStdString(report_->model), QString::fromStdString(report_->device))};
  restyle();
  replot(rpQueuedReplot);
}

void TimingLineChart::placeLegend(QSize size) {
  // Beside the axes or under them, whichever leaves the axes the larger usable area: the smaller
  // of their width and 1.5 times their height (a flat strip of lines is as bad as a thin one).
  int widest = 0, tallest = 0, entries = 0;
  for (int i = 0; i < legend->itemCount(); ++i)  // cells of the legend's grid: some may be empty
    if (QCPAbstractLegendItem* entry = legend->item(i)) {
      widest = std::max(widest, entry->minimumOuterSizeHint().width());
      tallest = std::max(tallest, entry->minimumOuterSizeHint().height());
      ++entries;
    }
  const int columnWidth = widest + legend->columnSpacing();
  const int rowHeight = tallest + legend->rowSpacing();
  const int titleHeight =
      static_cast<QCPLayoutElement*>(titleElement())->minimumOuterSizeHint().height();  // public there
  const int axesHeight = size.height() - titleHeight - 3 * fontMetrics().height();
  const int columnsBelow = std::max(1, (size.width() - 24) / std::max(1, columnWidth));
  const int rowsBelow = (entries + columnsBelow - 1) / columnsBelow;
  const auto usable = [](int w, int h) { return std::min(w, h * 3 / 2); };
  const int besideScore = usable(size.width() - columnWidth - 24, axesHeight);
  const int belowScore = usable(size.width(), axesHeight - rowsBelow * rowHeight - 12);
  // And under them wherever the axes beside would be less than one and a half times as wide as the
  // legend: at 1440x900 in presentation mode the legend beside took half the chart.
  const int besideWidth = size.width() - columnWidth - 24;
  const bool below = entries > 0 && (belowScore > besideScore || besideWidth < columnWidth * 3 / 2);
  // Both places keep their cells (the column beside: the legend's over a filler), so moving
  // the legend is a take and an add.
  QCPLayoutGrid* from = below ? legendBeside_ : legendBelow_;
  QCPLayoutGrid* to = below ? legendBelow_ : legendBeside_;
  if (from->hasElement(0, 0) && from->element(0, 0) == legend) {
    from->take(legend);
    to->addElement(0, 0, legend);
  }
  // Below: rows of as many entries as fit across; beside: one column.
  legend->setWrap(below ? columnsBelow : 0);
  legend->setFillOrder(below ? QCPLayoutGrid::foColumnsFirst : QCPLayoutGrid::foRowsFirst, true);
  legendIsBelow_ = below;
}

void TimingLineChart::restyle() {
  StyledPlot::restyle();
  placeLegend(size());
  // A hidden line's legend entry stays, grayed, so it can be clicked back on.
  const QColor text = palette().color(QPalette::Text);
  QColor off = text;
  off.setAlpha(90);
  for (int g = 0; g < graphCount(); ++g) {
    const bool shown = !hidden_.count(graphVariants_[static_cast<size_t>(g)]);
    graph(g)->setVisible(shown);
    if (auto* entry = legend->itemWithPlottable(graph(g))) entry->setTextColor(shown ? text : off);
  }
}

QString TimingLineChart::pointToolTip(const QPoint& position) const {
  if (!report_) return {};
  // Within a scatter dot's reach (a little more at large fonts), the nearest point of a line shown.
  const double reach = std::max(10.0, fontMetrics().height() * 0.6);
  double best = reach * reach;
  QString text;
  for (int g = 0; g < graphCount(); ++g) {
    const QCPGraph* line = graph(g);
    if (!line->visible()) continue;
    for (auto point = line->data()->constBegin(); point != line->data()->constEnd(); ++point) {
      const double dx = xAxis->coordToPixel(point->key) - position.x();
      const double dy = yAxis->coordToPixel(point->value) - position.y();
      if (dx * dx + dy * dy > best) continue;
      best = dx * dx + dy * dy;
      text = tr("%1\n%2 · batch %3\nop time %4 ms")
                 .arg(line->name(), convLayerLabel(*report_, layer_))
                 .arg(static_cast<int>(point->key))
                 .arg(QString::number(point->value, 'g', 4));
    }
  }
  return text;
}

void TimingLineChart::styleChanged(QEvent::Type change) {
  if (change == QEvent::FontChange)
    rebuild();
  else
    StyledPlot::styleChanged(change);
}

}  // namespace convscope::ui
