#include "ui/charts/prediction_chart.h"

#include <algorithm>
#include <cmath>

#include <numeric>

#include "app/core/engine/classifier.h"
#include "ui/charts/chart_style.h"

namespace convscope::ui {

PredictionChart::PredictionChart(QWidget* parent)
    : StyledPlot(parent, Title::None),
      bars_(new QCPBars(yAxis, xAxis)),
      topBar_(new QCPBars(yAxis, xAxis)),
      truthBox_(new QCPBars(yAxis, xAxis)) {
  // Classes run down the left axis, first class on top; probability along the bottom.
  yAxis->setRangeReversed(true);
  yAxis->setTickLength(0, 0);
  yAxis->setSubTicks(false);
  yAxis->grid()->setVisible(false);
  xAxis->setRange(0.0, 1.02);
  xAxis->setLabel(tr("probability"));
  QSharedPointer<QCPAxisTickerFixed> percent(new QCPAxisTickerFixed);
  percent->setTickStep(0.25);
  xAxis->setTicker(percent);
  xAxis->setNumberFormat("f");
  xAxis->setNumberPrecision(2);
  // Bars nine tenths of a class's row: the top class's figure, inside its bar, is as tall as the
  // class names and must not spill over the bar's edges (white on white).
  for (QCPBars* bars : {truthBox_, bars_, topBar_}) bars->setWidth(0.9);
  truthBox_->setWidth(1.0);
  truthBox_->setBrush(Qt::NoBrush);
  setMinimumHeight(220);
  restyle();
}

QSize PredictionChart::minimumSizeHint() const {
  const QFontMetrics metrics(yAxis->tickLabelFont());
  int names = metrics.horizontalAdvance(QStringLiteral("T-shirt/top ✓"));
  for (const QString& name : classNames_) names = std::max(names, metrics.horizontalAdvance(name + " ✓"));
  // The names, the axis' own padding, a plot of 240, the right margin and the frame.
  return {std::min(names, 400) + 24 + 240 + 24, 160};
}

QString PredictionChart::className(int index) const {
  return index >= 0 && index < classNames_.size() ? classNames_[index] : tr("class %1").arg(index);
}

QColor PredictionChart::topBarColour() const {
  if (trueLabel_ < 0) return palette().color(QPalette::Highlight);
  return topClass_ == trueLabel_ ? correctColour() : wrongColour();
}

void PredictionChart::setPrediction(const std::vector<float>& probabilities, const QStringList& classNames,
                                    int trueLabel) {
  classNames_ = classNames;
  trueLabel_ = trueLabel;
  const int classes = static_cast<int>(probabilities.size());
  // The same order as `classify --top` (ties to the lower class, a NaN last).
  const std::vector<int> likeliest = topClasses(probabilities, classes <= kAllClassesUpTo ? 1 : kLikeliestShown);
  topClass_ = likeliest.empty() ? -1 : likeliest.front();
  if (classes <= kAllClassesUpTo) {
    shownClasses_.resize(static_cast<size_t>(classes));
    std::iota(shownClasses_.begin(), shownClasses_.end(), 0);
  } else {
    shownClasses_ = likeliest;
    if (trueLabel_ >= 0 && trueLabel_ < classes &&
        std::find(shownClasses_.begin(), shownClasses_.end(), trueLabel_) == shownClasses_.end())
      shownClasses_.push_back(trueLabel_);
  }
  probabilities_.clear();
  for (int c : shownClasses_) probabilities_.push_back(probabilities[static_cast<size_t>(c)]);
  xAxis->setLabel(classes <= kAllClassesUpTo
                      ? tr("probability")
                      : tr("probability: the %1 likeliest of %2 classes").arg(likeliest.size()).arg(classes));
  const int count = static_cast<int>(shownClasses_.size());

  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
  QVector<double> keys, values, topKeys, topValues;
  for (int row = 0; row < count; ++row) {
    const int c = shownClasses_[static_cast<size_t>(row)];
    names->addTick(row, className(c) + (c == trueLabel_ ? QString::fromUtf8(" ✓") : QString()));
    (c == topClass_ ? topKeys : keys).push_back(row);
    (c == topClass_ ? topValues : values).push_back(probabilities_[static_cast<size_t>(row)]);
  }
  yAxis->setTicker(names);
  yAxis->setRange(-0.6, count - 0.4);
  bars_->setData(keys, values, true);
  topBar_->setData(topKeys, topValues, true);
  const auto truthRow = std::find(shownClasses_.begin(), shownClasses_.end(), trueLabel_);
  if (trueLabel_ >= 0 && truthRow != shownClasses_.end())
    truthBox_->setData({static_cast<double>(truthRow - shownClasses_.begin())}, {1.0}, true);
  else
    truthBox_->data()->clear();

  for (QCPItemText* label : valueLabels_) removeItem(label);
  valueLabels_.clear();
  for (int i = 0; i < count; ++i) {
    auto* label = new QCPItemText(this);
    label->setClipToAxisRect(false);
    label->position->setAxes(xAxis, yAxis);
    // Long bars carry their number inside, so it never runs off the chart.
    const double p = probabilities_[static_cast<size_t>(i)];
    const bool inside = p > 0.8;
    label->position->setCoords(inside ? p - 0.01 : p + 0.01, i);
    label->setPositionAlignment((inside ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
    label->setText(QString::number(100.0 * probabilities_[static_cast<size_t>(i)], 'f', 1) + " %");
    valueLabels_.push_back(label);
  }
  restyle();
}

void PredictionChart::clearPrediction() {
  setPrediction({}, {}, -1);
}

void PredictionChart::restyle() {
  StyledPlot::restyle();
  const QColor text = palette().color(QPalette::Text);
  QColor neutral = palette().color(QPalette::Mid);
  if (neutral == palette().color(QPalette::Base)) neutral = Qt::gray;
  bars_->setPen(Qt::NoPen);
  bars_->setBrush(neutral);
  topBar_->setPen(Qt::NoPen);
  topBar_->setBrush(topBarColour());
  truthBox_->setPen(QPen(text, 1.5, Qt::DashLine));
  // Scaled so that the ten class names never overlap when the chart is short (presentation
  // mode's large fonts at 1280x720): each class keeps a line of its own.
  appliedScale_ = fontScale();
  const auto scaled = [this](QFont f, double factor) {
    f.setPointSizeF(f.pointSizeF() * factor * appliedScale_);
    return f;
  };
  for (QCPAxis* axis : {xAxis, yAxis}) {
    axis->setTickLabelFont(scaled(axis->tickLabelFont(), 1.0));
    axis->setLabelFont(scaled(axis->labelFont(), 1.0));
  }
  const QFont small = scaled(font(), 0.85);
  for (size_t i = 0; i < valueLabels_.size(); ++i) {
    const bool inside = probabilities_[i] > 0.8;  // white on the coloured bar
    const QColor onBar = topBarColour().lightness() > 150 ? QColor(Qt::black) : QColor(Qt::white);
    valueLabels_[i]->setColor(inside ? onBar : text);
    QFont f = small;
    f.setBold(shownClasses_[i] == topClass_);
    valueLabels_[i]->setFont(f);
  }
  yAxis->setTickLabelFont(scaled(font(), 1.0));
  replot(QCustomPlot::rpQueuedReplot);
}

double PredictionChart::fontScale() const {
  // The classes down the side, then the probability axis below them (its numbers, its label and
  // the margins: about five lines).
  const int lines = std::max(static_cast<int>(probabilities_.size()), 10) + 5;
  const double lineHeight = QFontMetricsF(font()).height();
  return std::clamp(height() / (lines * lineHeight), 0.5, 1.0);
}

void PredictionChart::laidOut() {
  if (std::abs(fontScale() - appliedScale_) > 0.02) restyle();
}

}  // namespace convscope::ui
