#include "ui/charts/timing_line_chart.h"

#include <algorithm>
#include <cmath>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/chart_style.h"

namespace convscope::ui {

TimingLineChart::TimingLineChart(QWidget* parent) : QCustomPlot(parent), title_(new QCPTextElement(this)) {
  // Layout: the title across the top; under it the axes and, in a column of their own to the
  // right, the legend (with ten variants, a legend inside the axes would hide lines).
  QCPAxisRect* axes = axisRect();
  plotLayout()->take(axes);
  plotLayout()->simplify();
  auto* body = new QCPLayoutGrid;
  plotLayout()->addElement(0, 0, title_);
  plotLayout()->addElement(1, 0, body);
  body->addElement(0, 0, axes);
  auto* legendColumn = new QCPLayoutGrid;
  body->addElement(0, 1, legendColumn);
  body->setColumnStretchFactor(1, 0.001);
  axes->insetLayout()->take(legend);
  legendColumn->addElement(0, 0, legend);
  legendColumn->addElement(1, 0, new QCPLayoutElement(this));  // pushes the legend to the top
  legendColumn->setRowStretchFactor(0, 0.001);
  legendColumn->setMargins(QMargins(0, 8, 8, 0));
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
  setMinimumHeight(240);
  rebuild();
}

void TimingLineChart::setReport(std::shared_ptr<const BenchmarkReport> report) {
  report_ = std::move(report);
  if (report_ && layer_ >= static_cast<int>(convLayersIn(*report_).size())) layer_ = kAllConvLayers;
  rebuild();
}

void TimingLineChart::setLayer(int layer) {
  layer_ = layer;
  rebuild();
}

void TimingLineChart::rebuild() {
  clearGraphs();
  variants_.clear();
  if (!report_ || report_->runs.empty()) {
    title_->setText(tr("Op time vs batch size: run a sweep or open a benchmark JSON"));
    QSharedPointer<QCPAxisTickerLog> logTicks(new QCPAxisTickerLog);
    xAxis->setTicker(logTicks);
    xAxis->setRange(1, 10000);
    yAxis->setRange(0.01, 1000);
    legend->setVisible(false);
    styleChart(*this);
    replot(rpQueuedReplot);
    return;
  }
  double low = INFINITY, high = 0.0;
  for (const VariantSeries& series : opTimeSeries(*report_, layer_)) {
    QCPGraph* graph = addGraph();
    graph->setName(variantDisplayName(series.variant));
    const QColor colour = variantColour(series.variant);
    graph->setPen(QPen(colour, 2.2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, colour, colour, 7));
    QVector<double> x, y;
    for (size_t i = 0; i < series.batches.size(); ++i) {
      x.push_back(series.batches[i]);
      y.push_back(series.seconds[i] * 1e3);
      low = std::min(low, y.back());
      high = std::max(high, y.back());
    }
    graph->setData(x, y, true);
    variants_.push_back(series.variant);
  }
  // The batch sizes measured are the ticks: a student reads "1000", not "10^3".
  // Legend from the slowest to the fastest at the largest batch: the order the lines end in.
  legend->clearItems();
  std::vector<QCPGraph*> byTime;
  for (int g = 0; g < graphCount(); ++g) byTime.push_back(graph(g));
  const auto lastValue = [](QCPGraph* g) { return g->data()->isEmpty() ? 0.0 : (g->data()->constEnd() - 1)->value; };
  std::stable_sort(byTime.begin(), byTime.end(), [&](QCPGraph* a, QCPGraph* b) { return lastValue(a) > lastValue(b); });
  for (QCPGraph* g : byTime) legend->addItem(new QCPPlottableLegendItem(legend, g));

  const std::vector<int> batches = batchesIn(*report_);
  QSharedPointer<QCPAxisTickerText> batchTicks(new QCPAxisTickerText);
  for (int batch : batches) batchTicks->addTick(batch, QString::number(batch));
  xAxis->setTicker(batchTicks);
  xAxis->setRange(batches.front() / 1.6, batches.back() * 1.6);
  if (high > 0.0) yAxis->setRange(low / 2.5, high * 2.5);
  legend->setVisible(true);
  title_->setText(tr("Op time vs batch size · %1 · %2 on %3")
                      .arg(convLayerLabel(*report_, layer_), QString::fromStdString(report_->model),
                           QString::fromStdString(report_->device)));
  styleChart(*this);
  replot(rpQueuedReplot);
}

void TimingLineChart::changeEvent(QEvent* event) {
  QCustomPlot::changeEvent(event);
  if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange) {
    styleChart(*this);
    replot(rpQueuedReplot);
  }
}

}  // namespace convscope::ui
