#include "ui/charts/prediction_panel.h"

#include <algorithm>
#include <functional>
#include <map>

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTextDocument>
#include <QVBoxLayout>

#include "app/core/conv/variant_table.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/prediction_chart.h"
#include "ui/common/export.h"

namespace convscope::ui {
namespace {

QString milliseconds(double seconds) {
  // A no-break space: at presentation mode's size the table must not break "11.46" from "ms".
  return QString::number(seconds * 1e3, 'f', seconds < 0.01 ? 3 : 2) + QChar(0x00a0) + "ms";
}

QString plain(const QString& html) {
  QTextDocument document;
  document.setHtml(html);
  return document.toPlainText();
}

}  // namespace

PredictionPanel::PredictionPanel(QWidget* parent)
    : QWidget(parent),
      headline_(new QLabel(this)),
      verdict_(new QLabel(this)),
      chart_(new PredictionChart(this)),
      times_(new QLabel(this)) {
  // One line at any width: "Pullover  99.8 %" must not break before its "%". The font is as
  // large as the line allows (fitHeadline), and the label never widens the panel.
  headline_->setWordWrap(false);
  headline_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  headline_->installEventFilter(this);
  updateHeadlineFont();
  verdict_->setWordWrap(true);
  times_->setWordWrap(true);
  times_->setTextFormat(Qt::RichText);
  times_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

  auto* exportButton = new QPushButton(tr("Export…"), this);
  exportButton->setToolTip(tr("Save the probability chart as PNG or PDF"));
  connect(exportButton, &QPushButton::clicked, this, &PredictionPanel::exportAsked);
  auto* top = new QHBoxLayout;
  top->addWidget(headline_, 1);
  top->addWidget(exportButton, 0, Qt::AlignTop);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(verdict_);
  layout->addWidget(chart_, 1);
  layout->addWidget(times_);
  clear(tr("Choose a picture"));
}

void PredictionPanel::updateHeadlineFont() {
  // 1.6 times the text around it, less where the line would not fit, never below that text.
  QFont big = font();
  big.setBold(true);
  const double base = font().pointSizeF();
  const int room = headline_->contentsRect().width();
  for (double factor = 1.6; factor >= 1.0; factor -= 0.05) {
    big.setPointSizeF(base * factor);
    if (room <= 0 || QFontMetrics(big).horizontalAdvance(headline_->text()) <= room) break;
  }
  if (big != headline_->font()) headline_->setFont(big);
}

bool PredictionPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == headline_ && event->type() == QEvent::Resize) updateHeadlineFont();
  return QWidget::eventFilter(watched, event);
}

void PredictionPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) updateHeadlineFont();  // presentation mode
}

void PredictionPanel::clear(const QString& message, const QString& detail) {
  outcome_.reset();
  headline_->setText(message);
  updateHeadlineFont();
  verdict_->setText(detail.toHtmlEscaped());
  times_->clear();
  chart_->clearPrediction();
}

void PredictionPanel::setOutcome(std::shared_ptr<const InferenceOutcome> outcome) {
  if (!outcome || outcome->probabilities.empty()) {
    clear(tr("No prediction"));
    return;
  }
  outcome_ = std::move(outcome);
  const InferenceOutcome& o = *outcome_;
  const int top = o.topClass();
  const int label = o.input.label;
  chart_->setPrediction(o.probabilities, classNames_, label);
  const QString topName = chart_->className(top);
  // A no-break space keeps the number and its "%" together.
  headline_->setText(
      tr("%1  %2\u00a0%").arg(topName).arg(100.0 * o.probabilities[static_cast<size_t>(top)], 0, 'f', 1));
  updateHeadlineFont();

  const QString source = o.input.description.toHtmlEscaped();
  if (label < 0) {
    verdict_->setText(tr("%1 · no label to compare with").arg(source) + distanceNote(o));
  } else {
    const bool correct = top == label;
    const QColor colour = correct ? PredictionChart::correctColour() : PredictionChart::wrongColour();
    verdict_->setText(
        QString("<span style='color:%1; font-weight:bold'>%2</span> · %3")
            .arg(colour.name(),
                 correct ? tr("✓ correct") : tr("✗ wrong: it is %1").arg(chart_->className(label).toHtmlEscaped()),
                 source));
  }

  // The readable title of each conv node (conv 1, conv 2 ...), the ONNX name where there is none.
  std::map<std::string, std::string> titleOf;
  for (size_t i = 0; i < o.layers.size() && i < o.layerTitles.size(); ++i)
    if (!o.layerTitles[i].empty()) {  // "conv 1 · 12 filters ..." and "tanh 1 → 12×42×42": the name only
      const std::string& title = o.layerTitles[i];
      titleOf[o.layers[i].node] = title.substr(0, std::min(title.find(" · "), title.find(" → ")));
    }
  QString rows;
  double convTotal = 0.0;
  // A real network has dozens of conv layers (EfficientNet-Lite0: 49): listed whole they would
  // push the window past a laptop's screen. Then the slowest ones are listed, in network order,
  // and the rest summed in one row; the Profile tab has every one.
  std::vector<double> byTime;
  for (const ConvLayerTime& t : o.convTimes) byTime.push_back(t.seconds);
  std::sort(byTime.begin(), byTime.end(), std::greater<>());
  const bool shortened = byTime.size() > kAllLayersUpTo;
  const double slowEnough = shortened ? byTime[kSlowestListed - 1] : 0.0;
  int listed = 0, others = 0;
  double othersTotal = 0.0;
  for (const ConvLayerTime& t : o.convTimes) {
    convTotal += t.seconds;
    if (shortened && (t.seconds < slowEnough || listed == kSlowestListed)) {
      ++others;
      othersTotal += t.seconds;
      continue;
    }
    ++listed;
    QString ran = t.variant == o.variant ? QString() : tr(" (ran %1)").arg(QString::fromStdString(t.variant));
    if (!t.fallbackReason.empty()) ran += tr(": %1").arg(QString::fromStdString(t.fallbackReason).toHtmlEscaped());
    if (!t.fusedNodes.empty()) {
      // The op time covers the activation and pooling fused into the conv's kernel.
      QStringList fused;
      for (const std::string& node : t.fusedNodes)
        fused << QString::fromStdString(titleOf.count(node) ? titleOf.at(node) : node).toHtmlEscaped();
      ran += tr(" + %1, fused").arg(fused.join(tr(" + ")));
    }
    // The shapes are in the maps' titles beside: here the time, and what ran, in few lines (the
    // shapes here wrapped the table onto a dozen lines in presentation mode).
    rows += QString("<tr><td>%1</td><td align='right'>&nbsp;%2</td><td>&nbsp;%3</td></tr>")
                .arg(QString::fromStdString(titleOf.count(t.node) ? titleOf.at(t.node) : t.node).toHtmlEscaped(),
                     milliseconds(t.seconds), ran.trimmed());
  }
  if (others > 0)
    rows += tr("<tr><td>%1 other conv layers</td><td align='right'>&nbsp;%2</td><td>&nbsp;(each in the Profile "
               "tab)</td></tr>")
                .arg(others)
                .arg(milliseconds(othersTotal));
  const QString busy = loadNote(o, convTotal);
  const QString runs = o.timedRuns == 1 ? tr("1 run") : tr("%1 runs").arg(o.timedRuns);
  times_->setText(tr("<b>Op time of this picture</b> · median of %1 · %2 on %3")
                      .arg(runs, variantDisplayName(o.variant).toHtmlEscaped(),
                           QString::fromStdString(o.deviceName).toHtmlEscaped()) +
                  tr("<table>%1<tr><td>all conv layers</td><td align='right'>&nbsp;%2</td><td></td></tr></table>"
                     "whole request (resize, all layers, capture, timing): %3%4")
                      .arg(rows, milliseconds(convTotal), milliseconds(o.seconds), busy));
}

QString PredictionPanel::distanceNote(const InferenceOutcome& o) const {
  if (!o.dataSetDistance) return {};
  const DataSetDistance::Result& d = *o.dataSetDistance;
  const QString share = QString::number(100.0 * d.shareCloser, 'f', 1);
  if (d.unlike())
    return tr("<br><span style='color:%1; font-weight:bold'>Unlike the test set's pictures</span> (farther out than "
              "%2 % of them): the model has seen nothing like it, and its answer means little")
        .arg(PredictionChart::wrongColour().name(), share);
  if (d.unusual())
    return tr("<br><span style='color:%1'>Far out for the test set</span> (farther than %2 % of its pictures): "
              "take the answer with care")
        .arg(PredictionChart::wrongColour().name(), share);
  return tr("<br>Like the test set's pictures (%1 % of them lie farther out)")
      .arg(QString::number(100.0 * (1.0 - d.shareCloser), 'f', 0));
}

QString PredictionPanel::loadNote(const InferenceOutcome& o, double convTotal) {
  // The recent pictures of the same model, variant and device: a time far above theirs is said.
  const std::string key = o.modelName + "|" + o.variant + "|" + o.deviceName;
  std::vector<double>& recent = recentConvTotals_[key];
  std::vector<double> sorted = recent;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? 0.0 : sorted[sorted.size() / 2];
  recent.push_back(convTotal);
  if (recent.size() > 20) recent.erase(recent.begin());

  QStringList why;
  if (!o.busyWith.empty()) {
    QStringList jobs;
    for (const std::string& job : o.busyWith) jobs << QString::fromStdString(job);
    why << tr("while a %1 was running (they took turns on the device, but the machine was busy)")
               .arg(jobs.join(tr(" and a ")).toHtmlEscaped());
  }
  if (o.cores > 0 && o.loadAverage > o.cores)
    why << tr("under load (load average %1 on %2)")
               .arg(o.loadAverage, 0, 'f', 1)
               .arg(o.cores == 1 ? tr("1 core") : tr("%1 cores").arg(o.cores));
  if (sorted.size() >= 3 && median > 0.0 && convTotal > 3.0 * median)
    why << tr("at %1× the median of the last %2 pictures (%3): the machine may have been busy")
               .arg(convTotal / median, 0, 'f', 1)
               .arg(sorted.size())
               .arg(milliseconds(median));
  if (why.isEmpty()) return {};
  return tr("<br><span style='color:%1'>Measured %2.</span>")
      .arg(PredictionChart::wrongColour().name(), why.join(tr("; ")));
}

QString PredictionPanel::headline() const {
  return plain(headline_->text()) + "\n" + plain(verdict_->text());
}

QString PredictionPanel::shownTopClassName() const {
  return chart_->topClass() >= 0 ? chart_->className(chart_->topClass()) : QString();
}

QString PredictionPanel::timesText() const {
  return plain(times_->text());
}

QString PredictionPanel::exportChart(const QString& path) {
  return exportPlot(*chart_, path, 640, 420);
}

void PredictionPanel::exportAsked() {
  const QString path = askExportPath(this, "prediction");
  if (path.isEmpty()) return;
  if (const QString error = exportChart(path); !error.isEmpty()) emit errorOccurred(error);
}

}  // namespace convscope::ui
