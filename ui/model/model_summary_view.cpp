#include "ui/model/model_summary_view.h"

#include <QApplication>
#include <QColor>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

#include "app/core/engine/plan.h"

namespace convscope::ui {
namespace {

// The share of FLOPs as its number and a bar scaled to the column's width, so the bar is never
// elided into "..." (a text bar of block characters was, at large fonts).
class ShareBarDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QStyleOptionViewItem plain = option;
    initStyleOption(&plain, index);
    const double share = index.data(Qt::UserRole).toDouble();
    const QString number = plain.text;
    plain.text.clear();
    QApplication::style()->drawControl(QStyle::CE_ItemViewItem, &plain, painter, plain.widget);
    const QRect area = option.rect.adjusted(4, 3, -4, -3);
    const int numberWidth = option.fontMetrics.horizontalAdvance(QStringLiteral("100.0 %")) + 8;
    painter->save();
    painter->setPen(option.palette.color(QPalette::Text));
    painter->drawText(QRect(area.left(), area.top(), numberWidth - 8, area.height()), Qt::AlignRight | Qt::AlignVCenter,
                      number);
    const QRect bar(area.left() + numberWidth, area.top() + area.height() / 4,
                    static_cast<int>(std::lround(share * std::max(0, area.width() - numberWidth))), area.height() / 2);
    painter->fillRect(bar, option.palette.color(QPalette::Text));
    painter->restore();
  }
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    size.setWidth(option.fontMetrics.horizontalAdvance(QStringLiteral("100.0 %")) + 8 + 60);
    return size;
  }
};

QTableWidgetItem* numberItem(int64_t value) {
  auto* item = new QTableWidgetItem(QLocale().toString(static_cast<qlonglong>(value)));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

ModelSummaryView::ModelSummaryView(QWidget* parent)
    : QWidget(parent),
      header_(new QLabel(this)),
      table_(new QTableWidget(this)),
      totals_(new QLabel(this)),
      planTitle_(new QLabel(this)),
      plan_(new QTableWidget(this)) {
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  header_->setTextFormat(Qt::RichText);
  table_->setColumnCount(6);
  table_->setHorizontalHeaderLabels(
      {tr("Layer"), tr("Operator"), tr("Output shape"), tr("Parameters"), tr("FLOPs"), tr("Share of FLOPs")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  table_->setItemDelegateForColumn(5, new ShareBarDelegate(table_));
  totals_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  planTitle_->setWordWrap(true);
  planTitle_->setTextFormat(Qt::RichText);
  plan_->setColumnCount(3);
  plan_->setHorizontalHeaderLabels({tr("Stage"), tr("Layers"), tr("Runs on")});
  plan_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  plan_->setSelectionBehavior(QAbstractItemView::SelectRows);
  plan_->verticalHeader()->setVisible(false);
  // Rows follow their text (a long fallback reason wraps) and the font (presentation mode).
  plan_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  plan_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  plan_->horizontalHeader()->setStretchLastSection(true);
  plan_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(header_);
  layout->addWidget(table_, 3);
  layout->addWidget(totals_);
  layout->addWidget(planTitle_);
  layout->addWidget(plan_, 2);
}

QString ModelSummaryView::planTitle() const {
  return planTitle_->text();
}

void ModelSummaryView::showPlan(const Model& model, const std::string& variantId) {
  plan_->setRowCount(0);
  Plan plan;
  try {
    plan = makePlan(model, variantId, model.inputShapesFor(1));
  } catch (const std::exception& e) {
    planTitle_->setText(tr("<h3>Plan</h3><p>No plan for %1: %2</p>")
                            .arg(QString::fromStdString(variantId), QString::fromStdString(e.what()).toHtmlEscaped()));
    return;
  }
  const int fallbacks = plan.fallbackCount();
  planTitle_->setText(tr("<h3>Plan for %1</h3><p>%2 stages on the %3, %4. A stage is one layer, or a conv fused with "
                         "what follows it in one kernel; a fallback says who runs a layer instead and why.</p>")
                          .arg(QString::fromStdString(variantId))
                          .arg(plan.stages.size())
                          .arg(plan.onGpu ? tr("GPU") : tr("CPU"))
                          .arg(fallbacks == 0 ? tr("no fallbacks") : tr("%n fallback(s)", "", fallbacks)));
  plan_->setRowCount(static_cast<int>(plan.stages.size()));
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const PlanStage& stage = plan.stages[i];
    const int row = static_cast<int>(i);
    QStringList layers;
    for (size_t node : stage.nodes)
      layers << QString("%1 (%2)").arg(QString::fromStdString(model.nodes[node].name),
                                       QString::fromStdString(model.nodes[node].opType));
    QString runsOn;
    if (stage.hasConv) {
      runsOn = QString::fromStdString(stage.variant);
      if (stage.fused()) runsOn += tr(", fused in one kernel");
      if (!stage.fallbackReason.empty())
        runsOn += tr(" (fallback: %1 declined it: %2)")
                      .arg(QString::fromStdString(plan.selectedVariant), QString::fromStdString(stage.fallbackReason));
    } else if (stage.hostRoundTrip) {
      runsOn = tr("CPU (fallback: no GPU kernel for %1; copied to the host and back)")
                   .arg(QString::fromStdString(model.nodes[stage.nodes.front()].opType));
    } else {
      runsOn = stage.onGpu ? tr("GPU") : tr("CPU");
    }
    plan_->setItem(row, 0, new QTableWidgetItem(QString::number(i + 1)));
    plan_->setItem(row, 1, new QTableWidgetItem(layers.join(QStringLiteral(" + "))));
    auto* who = new QTableWidgetItem(runsOn);
    if (!stage.fallbackReason.empty() || stage.hostRoundTrip) who->setForeground(QColor(0xb0, 0x40, 0x00));
    plan_->setItem(row, 2, who);
  }
}

void ModelSummaryView::setModel(const Model& model, const std::optional<ModelCard>& card) {
  QString io;
  for (const ValueInfo& input : model.inputs)
    io += tr("input <b>%1</b> %2 ")
              .arg(QString::fromStdString(input.name).toHtmlEscaped(),
                   QString::fromStdString(shapeToString(input.shape)));
  for (const ValueInfo& output : model.outputs)
    io += tr("· output <b>%1</b> %2 ")
              .arg(QString::fromStdString(output.name).toHtmlEscaped(),
                   QString::fromStdString(shapeToString(output.shape)));
  QString text =
      tr("<h2>%1</h2><p>%2<br>%3 · ONNX IR %4, opset %5 · %6 parameters</p><p>%7</p>")
          .arg(QString::fromStdString(model.name).toHtmlEscaped(),
               QDir::toNativeSeparators(QString::fromStdString(model.sourcePath)).toHtmlEscaped(),
               QString::fromStdString(model.producer.empty() ? "unknown producer" : model.producer).toHtmlEscaped())
          .arg(model.irVersion)
          .arg(model.opset)
          .arg(QLocale().toString(static_cast<qlonglong>(model.parameterCount())))
          .arg(io);
  if (card && card->testAccuracy)
    text += tr("<p>%1<br>PyTorch test accuracy: <b>%2 %</b> (%3 of %4) · exported with %5 · trained on %6</p>")
                .arg(QString::fromStdString(card->description).toHtmlEscaped())
                .arg(100.0 * *card->testAccuracy, 0, 'f', 2)
                .arg(card->testCorrect)
                .arg(card->testCount)
                .arg(QString::fromStdString(card->exporter).toHtmlEscaped(),
                     QString::fromStdString(card->trainedOn).toHtmlEscaped());
  else if (card)
    text += tr("<p>%1<br>exported with %2 · %3</p>")
                .arg(QString::fromStdString(card->description).toHtmlEscaped(),
                     QString::fromStdString(card->exporter).toHtmlEscaped(),
                     QString::fromStdString(card->trainedOn).toHtmlEscaped());
  header_->setText(text);

  const std::vector<LayerInfo> layers = model.layers();
  table_->setRowCount(static_cast<int>(layers.size()));
  int64_t parameters = 0, flops = 0, allFlops = 0;
  for (const LayerInfo& layer : layers) allFlops += layer.flops;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerInfo& layer = layers[i];
    const int row = static_cast<int>(i);
    table_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(layer.name)));
    table_->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(layer.opType)));
    table_->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(shapeToString(layer.outputShape))));
    table_->setItem(row, 3, numberItem(layer.parameters));
    table_->setItem(row, 4, numberItem(layer.flops));
    const double share = allFlops > 0 ? static_cast<double>(layer.flops) / static_cast<double>(allFlops) : 0.0;
    // A bar: which layers the time will go to, at a glance.
    auto* shareItem = new QTableWidgetItem(QString("%1 %").arg(100.0 * share, 0, 'f', 1));
    shareItem->setData(Qt::UserRole, share);
    table_->setItem(row, 5, shareItem);
    parameters += layer.parameters;
    flops += layer.flops;
  }
  // The totals under the table, outside its scrolling: always whole, whatever the number of layers.
  totals_->setText(tr("<b>total: %1 parameters · %2 FLOPs per image</b>")
                       .arg(QLocale().toString(static_cast<qlonglong>(parameters)),
                            QLocale().toString(static_cast<qlonglong>(flops))));
}

}  // namespace convscope::ui
