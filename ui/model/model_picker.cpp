#include "ui/model/model_picker.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "app/core/util/data_dir.h"

namespace convscope::ui {
namespace {

QString compactCount(double value) {
  if (value >= 1e9) return QString::number(value / 1e9, 'f', 2) + " G";
  if (value >= 1e6) return QString::number(value / 1e6, 'f', 2) + " M";
  if (value >= 1e3) return QString::number(value / 1e3, 'f', 1) + " k";
  return QString::number(value) + " ";
}

}  // namespace

ModelPicker::ModelPicker(QWidget* parent) : QWidget(parent), combo_(new QComboBox(this)), summary_(new QLabel(this)) {
  for (const QString& path : shippedModels()) combo_->addItem(QFileInfo(path).completeBaseName(), path);
  combo_->setToolTip(tr("The models shipped in data/models/ and the files you opened"));
  combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  combo_->setMinimumContentsLength(12);
  connect(combo_, &QComboBox::activated, this, [this](int i) {
    const QString path = combo_->itemData(i).toString();
    if (path != current_) emit modelRequested(path);
  });
  auto* open = new QPushButton(tr("Open…"), this);
  open->setToolTip(tr("Open an ONNX model file (Ctrl+O); you can also drop one on the window"));
  connect(open, &QPushButton::clicked, this, &ModelPicker::openFileDialog);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* row = new QHBoxLayout;
  row->addWidget(combo_, 1);
  row->addWidget(open);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(row);
  layout->addWidget(summary_);
}

QStringList ModelPicker::shippedModels() {
  QStringList paths;
  const QDir folder(QString::fromUtf8(shippedModelsDir()));
  for (const QString& name : folder.entryList({"*.onnx"}, QDir::Files, QDir::Name))
    paths << folder.absoluteFilePath(name);
  return paths;
}

QString ModelPicker::summary(const Model& model, const std::optional<ModelCard>& card) {
  int64_t flops = 0;
  for (const LayerInfo& layer : model.layers()) flops += layer.flops;
  QString input;
  try {
    input = QString("%1×%2×%3").arg(model.inputChannels()).arg(model.inputHeight()).arg(model.inputWidth());
  } catch (const std::exception&) {
    input = tr("?");
  }
  QString text = tr("Input %1 · %2 nodes · %3parameters · %4FLOP per image")
                     .arg(input)
                     .arg(model.nodes.size())
                     .arg(compactCount(static_cast<double>(model.parameterCount())))
                     .arg(compactCount(static_cast<double>(flops)));
  if (card && card->testAccuracy)
    text += tr(" · PyTorch test accuracy %1 %").arg(100.0 * *card->testAccuracy, 0, 'f', 2);
  return text;
}

void ModelPicker::setCurrentModel(const QString& path, const Model& model, const std::optional<ModelCard>& card) {
  current_ = QFileInfo(path).absoluteFilePath();
  selectInCombo(current_);
  summary_->setText(summary(model, card));
  summary_->setToolTip(card ? QString::fromStdString(card->description) : QDir::toNativeSeparators(current_));
}

QString ModelPicker::summaryText() const {
  return summary_->text();
}

void ModelPicker::selectInCombo(const QString& path) {
  const QSignalBlocker blocker(combo_);
  int index = combo_->findData(path);
  if (index < 0) {
    combo_->addItem(QFileInfo(path).completeBaseName(), path);
    index = combo_->count() - 1;
    combo_->setItemData(index, QDir::toNativeSeparators(path), Qt::ToolTipRole);
  }
  combo_->setCurrentIndex(index);
}

void ModelPicker::openFileDialog() {
  const QString folder =
      current_.isEmpty() ? QString::fromUtf8(shippedModelsDir()) : QFileInfo(current_).absolutePath();
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a model"), folder, tr("ONNX models (*.onnx);;All files (*)"));
  if (!path.isEmpty()) emit modelRequested(path);
}

void ModelPicker::setCompact(bool compact) {
  summary_->setVisible(!compact);
}

}  // namespace convscope::ui
