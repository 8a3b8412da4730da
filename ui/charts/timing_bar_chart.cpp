#include "ui/charts/timing_bar_chart.h"

#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/chart_style.h"

namespace convscope::ui {

TimingBarChart::TimingBarChart(QWidget* parent) : StyledPlot(parent), group_(new QCPBarsGroup(this)) {
  // Horizontal bars: the variants' names read along the left axis however many there are.
  yAxis->setRangeReversed(true);  // the first variant on top
  yAxis->setTickLength(0, 0);
  yAxis->setSubTicks(false);
  yAxis->grid()->setVisible(false);
  xAxis->setNumberFormat("g");
  xAxis->setNumberPrecision(6);
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
  setMinimumHeight(160);
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

void TimingBarChart::setLogarithmic(bool logarithmic) {
  setTimeAxis(logarithmic ? TimeAxis::Logarithmic : TimeAxis::Linear);
}

void TimingBarChart::setTimeAxis(TimeAxis choice) {
  choice_ = choice;
  rebuild();
}

bool TimingBarChart::logarithmicFor(double shortest, double longest) const {
  if (choice_ != TimeAxis::Automatic) return choice_ == TimeAxis::Logarithmic;
  return shortest > 0.0 && longest / shortest > kLogarithmicAboveSpan;
}

void TimingBarChart::setAxisScale(double shortest, double longest) {
  const bool wasLogarithmic = logarithmic_;
  logarithmic_ = logarithmicFor(shortest, longest);
  if (logarithmic_) {
    xAxis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setSubTickCount(8);
    xAxis->setTicker(ticker);
    // Chosen for the user: say why, so nobody reads the bars' lengths as proportional.
    captionParts_ = {tr("op time (ms), logarithmic scale:")};
    if (choice_ == TimeAxis::Automatic)
      captionParts_ << tr("the times span %1×,").arg(QString::number(longest / shortest, 'f', 0));
    captionParts_ << tr("each major line is 10× the one before");
  } else {
    xAxis->setScaleType(QCPAxis::stLinear);
    xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    captionParts_ = {tr("op time (ms), linear scale")};
  }
  fitCaption(width());
  if (logarithmic_ != wasLogarithmic) emit scaleChanged(logarithmic_);
}

void TimingBarChart::rebuild() {
  clearPlottables();
  variants_.clear();
  if (!report_ || report_->runs.empty()) {
    setAxisScale(0.0, 0.0);
    titleParts_ = {tr("Variants side by side at one batch size")};
    legend->setVisible(false);
    xAxis->setRange(logarithmic_ ? 0.01 : 0.0, logarithmic_ ? 1000 : 10);
    yAxis->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
    restyle();
    replot(rpQueuedReplot);
    return;
  }
  const std::vector<std::string> layers = convLayersIn(*report_);
  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
  for (const std::string& variant : variantsInCourseOrder(*report_))
    if (findRun(*report_, variant, batch_)) {
      variants_.push_back(variant);
      names->addTick(static_cast<double>(variants_.size()), variantDisplayName(variant));
    }
  double low = INFINITY, high = 0.0;
  // Nine tenths of each variant's row: with 14 variants at 1024x700 a bar stays over 12 px thick.
  const double width = 0.9 / static_cast<double>(std::max<size_t>(1, layers.size()));
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
  setAxisScale(high > 0.0 ? low : 0.0, high);
  if (high > 0.0 && logarithmic_) {
    // Bars on a log axis need a positive base: the decade below the shortest bar.
    const double base = std::pow(10.0, std::floor(std::log10(low / 2.0)));
    for (int i = 0; i < plottableCount(); ++i) qobject_cast<QCPBars*>(plottable(i))->setBaseValue(base);
    xAxis->setRange(base, high * 3.0);
  } else if (high > 0.0) {
    xAxis->setRange(0.0, high * 1.08);
  }
  yAxis->setTicker(names);
  yAxis->setRange(0.4, static_cast<double>(variants_.size()) + 0.6);
  legend->setVisible(!layers.empty());
  titleParts_ = {tr("Op time per conv layer at batch %1").arg(batch_)};
  restyle();
  replot(rpQueuedReplot);
}

void TimingBarChart::restyle() {
  StyledPlot::restyle();
  fitCaption(width());  // at the new font too
}

QString TimingBarChart::barToolTip(const QPoint& position) const {
  for (int i = 0; i < plottableCount(); ++i) {
    auto* bars =
        qobject_cast<QCPBars*>(const_cast<TimingBarChart*>(this)->plottable(i));  // QCustomPlot lacks a const one
    QVariant details;
    if (!bars || bars->selectTest(position, false, &details) < 0) continue;  // QCPBars: >= 0 inside a bar
    const QCPDataSelection hit = details.value<QCPDataSelection>();
    if (hit.isEmpty()) continue;
    const auto bar = bars->data()->at(hit.dataRange().begin());
    const size_t v = static_cast<size_t>(std::lround(bar->key)) - 1;
    if (v >= variants_.size()) continue;
    return tr("%1\n%2 · batch %3\nop time %4 ms")
        .arg(variantDisplayName(variants_[v]), bars->name())
        .arg(batch_)
        .arg(QString::number(bar->value, 'g', 4));
  }
  return {};
}

void TimingBarChart::fitCaption(int chartWidth) {
  // Its parts on as few lines as fit under the bars (the names' column and margins take about a
  // third of the chart): never cut at the chart's edge ("... 10x the one befo").
  const QFontMetrics metrics(xAxis->labelFont());
  // Under the plot: the chart less the variants' names on the left and the margins.
  int names = 0;
  const QFontMetrics tickMetrics(yAxis->tickLabelFont());
  for (const std::string& variant : variants_)
    names = std::max(names, tickMetrics.horizontalAdvance(variantDisplayName(variant)));
  const int room = std::max(120, std::min(chartWidth * 2 / 3, chartWidth - names - 60));
  QStringList lines;
  for (const QString& part : captionParts_) {
    if (!lines.isEmpty() && metrics.horizontalAdvance(lines.back() + ' ' + part) <= room)
      lines.back() += ' ' + part;
    else
      lines << part;
  }
  xAxis->setLabel(lines.join('\n'));
}

}  // namespace convscope::ui
