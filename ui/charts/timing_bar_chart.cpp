#include "ui/charts/timing_bar_chart.h"

#include <algorithm>
#include <cmath>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/chart_style.h"

namespace convscope::ui {

TimingBarChart::TimingBarChart(QWidget* parent)
    : QCustomPlot(parent), title_(new QCPTextElement(this)), group_(new QCPBarsGroup(this)) {
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, title_);
  // Horizontal bars: the variants' names read along the left axis however many there are.
  yAxis->setRangeReversed(true);  // the first variant on top
  yAxis->setTickLength(0, 0);
  yAxis->setSubTicks(false);
  yAxis->grid()->setVisible(false);
  xAxis->setScaleType(QCPAxis::stLogarithmic);
  QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
  ticker->setSubTickCount(8);
  xAxis->setTicker(ticker);
  xAxis->setNumberFormat("g");
  xAxis->setNumberPrecision(6);
  xAxis->setLabel(tr("op time (ms), logarithmic"));
  group_->setSpacingType(QCPBarsGroup::stAbsolute);
  group_->setSpacing(1);
  // The legend goes under the chart, in one row, where it cannot hide a bar.
  legend->setVisible(true);
  auto* legendRow = new QCPLayoutGrid;
  plotLayout()->addElement(2, 0, legendRow);
  plotLayout()->setRowStretchFactor(2, 0.001);
  axisRect()->insetLayout()->take(legend);
  legendRow->addElement(0, 0, legend);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legendRow->setMargins(QMargins(0, 0, 0, 4));
  setMinimumHeight(220);
  rebuild();
}

void TimingBarChart::setReport(std::shared_ptr<const BenchmarkReport> report) {
  report_ = std::move(report);
  if (report_) {
    const std::vector<int> batches = batchesIn(*report_);
    if (!batches.empty() && std::find(batches.begin(), batches.end(), batch_) == batches.end()) batch_ = batches.back();
  }
  rebuild();
}

void TimingBarChart::setBatch(int batch) {
  batch_ = batch;
  rebuild();
}

void TimingBarChart::rebuild() {
  clearPlottables();
  variants_.clear();
  if (!report_ || report_->runs.empty()) {
    title_->setText(tr("Variants side by side at one batch size"));
    legend->setVisible(false);
    xAxis->setRange(0.01, 1000);
    yAxis->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
    styleChart(*this);
    replot(rpQueuedReplot);
    return;
  }
  const std::vector<std::string> layers = convLayersIn(*report_);
  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
  for (const std::string& variant : variantsIn(*report_))
    if (findRun(*report_, variant, batch_)) {
      variants_.push_back(variant);
      names->addTick(static_cast<double>(variants_.size()), variantDisplayName(variant));
    }
  double low = INFINITY, high = 0.0;
  const double width = 0.8 / static_cast<double>(std::max<size_t>(1, layers.size()));
  for (size_t l = 0; l < layers.size(); ++l) {
    auto* bars = new QCPBars(yAxis, xAxis);
    bars->setName(convLayerLabel(*report_, static_cast<int>(l)));
    bars->setWidth(width);
    bars->setBrush(layerColour(static_cast<int>(l)));
    bars->setPen(Qt::NoPen);
    bars->setBarsGroup(group_);
    QVector<double> keys, values;
    for (size_t v = 0; v < variants_.size(); ++v) {
      double seconds = 0.0;
      if (runOpTime(*findRun(*report_, variants_[v], batch_), static_cast<int>(l), &seconds) && seconds > 0.0) {
        keys.push_back(static_cast<double>(v + 1));
        values.push_back(seconds * 1e3);
        low = std::min(low, values.back());
        high = std::max(high, values.back());
      }
    }
    bars->setData(keys, values, true);
  }
  if (high > 0.0) {
    // Bars on a log axis need a positive base: the decade below the shortest bar.
    const double base = std::pow(10.0, std::floor(std::log10(low / 2.0)));
    for (int i = 0; i < plottableCount(); ++i) qobject_cast<QCPBars*>(plottable(i))->setBaseValue(base);
    xAxis->setRange(base, high * 3.0);
  }
  yAxis->setTicker(names);
  yAxis->setRange(0.4, static_cast<double>(variants_.size()) + 0.6);
  legend->setVisible(!layers.empty());
  title_->setText(tr("Op time per conv layer at batch %1").arg(batch_));
  styleChart(*this);
  replot(rpQueuedReplot);
}

void TimingBarChart::changeEvent(QEvent* event) {
  QCustomPlot::changeEvent(event);
  if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange) {
    styleChart(*this);
    replot(rpQueuedReplot);
  }
}

}  // namespace convscope::ui
