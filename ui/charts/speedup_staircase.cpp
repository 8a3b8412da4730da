#include "ui/charts/speedup_staircase.h"

#include <algorithm>
#include <cmath>

#include "ui/charts/chart_style.h"

namespace convscope::ui {
namespace {

QString times(double factor) {
  if (factor <= 0.0) return QStringLiteral("—");
  return QStringLiteral("×%1").arg(factor, 0, 'f', factor < 10.0 ? 2 : 1);
}

}  // namespace

SpeedupStaircase::SpeedupStaircase(QWidget* parent) : StyledPlot(parent) {
  // Course steps down the left axis (the first on top), speed-up along a logarithmic axis: each
  // step that paid reaches further right, a staircase.
  xAxis->setScaleType(QCPAxis::stLogarithmic);
  QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
  ticker->setSubTickCount(8);
  xAxis->setTicker(ticker);
  xAxis->setNumberFormat("g");
  yAxis->setRangeReversed(true);
  yAxis->setSubTicks(false);
  yAxis->setTickLength(0, 0);
  yAxis->grid()->setVisible(false);
  setMinimumHeight(200);
  rebuild();
}

void SpeedupStaircase::setReport(std::shared_ptr<const BenchmarkReport> report, const QString& machine, int layer,
                                 int batch) {
  report_ = std::move(report);
  machine_ = machine;
  layer_ = layer;
  batch_ = batch;
  if (report_) {
    const std::vector<int> batches = batchesIn(*report_);
    if (!batches.empty() && std::find(batches.begin(), batches.end(), batch_) == batches.end()) batch_ = batches.back();
  }
  rebuild();
}

void SpeedupStaircase::rebuild() {
  clearPlottables();
  clearItems();
  steps_ = report_ ? speedups(*report_, layer_, batch_, &baseline_) : std::vector<Speedup>{};
  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
  auto* bars = new QCPBars(yAxis, xAxis);
  bars->setWidth(0.7);
  bars->setPen(Qt::NoPen);
  double low = 1.0, high = 1.0;
  for (const Speedup& s : steps_) {
    low = std::min(low, s.overBaseline > 0.0 ? s.overBaseline : low);
    high = std::max(high, s.overBaseline);
  }
  const double base = std::pow(10.0, std::floor(std::log10(low / 1.5)));
  bars->setBaseValue(base);
  labels_.clear();
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Speedup& s = steps_[i];
    const double key = static_cast<double>(i + 1);
    names->addTick(key, variantDisplayName(s.variant));
    labels_ << (i == 0 || s.overPrevious <= 0.0 ? times(s.overBaseline)
                                                : tr("%1 / %2").arg(times(s.overBaseline), times(s.overPrevious)));
    if (s.overBaseline <= 0.0) continue;
    // One bar per step in its variant's colour: QCPBars has one brush, so each step is its own.
    auto* step = i == 0 ? bars : new QCPBars(yAxis, xAxis);
    step->setWidth(0.7);
    step->setPen(Qt::NoPen);
    step->setBaseValue(base);
    step->setBrush(variantColour(s.variant));
    step->addData(key, s.overBaseline);
    auto* label = new QCPItemText(this);
    label->position->setCoords(s.overBaseline, key);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    label->setPadding(QMargins(4, 0, 0, 0));
    label->setText(labels_.back());
    label->setColor(palette().color(QPalette::Text));
  }
  yAxis->setTicker(names);
  yAxis->setRange(0.4, static_cast<double>(steps_.size()) + 0.6);
  xAxis->setRange(base, high * 60.0);  // room for the labels right of the longest bar
  const QString baseName = baseline_.empty() ? tr("the baseline") : variantDisplayName(baseline_);
  xAxis->setLabel(tr("speed-up over %1 (log scale)").arg(baseName));
  if (!report_)
    titleParts_ = {tr("Speed-up staircase: open a benchmark JSON")};
  else
    titleParts_ = {tr("Speed-up per course step, %1").arg(convLayerLabel(*report_, layer_)),
                   tr("%1, batch %2").arg(machine_).arg(batch_),
                   tr("labels: over %1 / over the step before").arg(baseName)};
  restyle();
  replot(rpQueuedReplot);
}

void SpeedupStaircase::restyle() {
  StyledPlot::restyle();
  for (int i = 0; i < itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(item(i))) {
      QFont small = font();
      small.setPointSizeF(small.pointSizeF() * 0.85);
      text->setFont(small);
      text->setColor(palette().color(QPalette::Text));
    }
}

}  // namespace convscope::ui
