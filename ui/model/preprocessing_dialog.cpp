#include "ui/model/preprocessing_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>
#include <tuple>

namespace convscope::ui {
namespace {

QDoubleSpinBox* numberBox(double low, double high, int decimals, QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setRange(low, high);
  box->setDecimals(decimals);
  box->setSingleStep(std::pow(10.0, -std::min(decimals, 2)));
  return box;
}

}  // namespace

PreprocessingDialog::PreprocessingDialog(const Preprocessing& current, const Preprocessing& modelsOwn, int channels,
                                         QWidget* parent)
    : QDialog(parent), modelsOwn_(modelsOwn), channels_(channels) {
  setWindowTitle(tr("Picture preprocessing"));
  auto* form = new QFormLayout;
  framing_ = new QComboBox(this);
  framing_->addItem(tr("Fit: whole picture, aspect kept, padded"), static_cast<int>(PictureFraming::Fit));
  framing_->addItem(tr("Centre crop (ImageNet's)"), static_cast<int>(PictureFraming::CentreCrop));
  framing_->addItem(tr("Stretch to the input"), static_cast<int>(PictureFraming::Stretch));
  form->addRow(tr("&Resize"), framing_);
  cropFraction_ = numberBox(0.01, 1.0, 3, this);
  cropFraction_->setToolTip(tr("The shorter side is resized to the input divided by this, then the centre is cut out"));
  form->addRow(tr("Crop &fraction"), cropFraction_);
  inversion_ = new QComboBox(this);
  inversion_->addItem(tr("When the background is light (Fashion-MNIST)"),
                      static_cast<int>(PictureInversion::Automatic));
  inversion_->addItem(tr("Always"), static_cast<int>(PictureInversion::Always));
  inversion_->addItem(tr("Never"), static_cast<int>(PictureInversion::Never));
  form->addRow(tr("&Invert"), inversion_);
  channelOrder_ = new QComboBox(this);
  channelOrder_->addItem(tr("R, G, B"), static_cast<int>(ChannelOrder::Rgb));
  channelOrder_->addItem(tr("B, G, R"), static_cast<int>(ChannelOrder::Bgr));
  channelOrder_->setEnabled(channels == 3);
  form->addRow(tr("Channel &order"), channelOrder_);
  valueRange_ = numberBox(0.001, 65535.0, 3, this);
  valueRange_->setToolTip(tr("The range the mean and deviation are written for: 1 (0 to 1) or 255 (0 to 255)"));
  form->addRow(tr("&Value range"), valueRange_);
  for (auto [boxes, label, low] :
       {std::tuple{&mean_, tr("&Mean"), -65535.0}, std::tuple{&deviation_, tr("&Std"), 1e-4}}) {
    auto* row = new QHBoxLayout;
    for (int c = 0; c < 3; ++c) {
      (*boxes)[static_cast<size_t>(c)] = numberBox(low, 65535.0, 4, this);
      (*boxes)[static_cast<size_t>(c)]->setEnabled(c == 0 || channels == 3);
      row->addWidget((*boxes)[static_cast<size_t>(c)]);
    }
    form->addRow(label, row);
  }
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  QPushButton* own = buttons->addButton(tr("Model's &own"), QDialogButtonBox::ResetRole);
  connect(own, &QPushButton::clicked, this, [this] { setPreprocessing(modelsOwn_); });
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(summary_);
  layout->addWidget(buttons);

  setPreprocessing(current);
  for (QComboBox* box : {framing_, inversion_, channelOrder_})
    connect(box, &QComboBox::currentIndexChanged, this, &PreprocessingDialog::updateSummary);
  for (QDoubleSpinBox* box :
       {cropFraction_, valueRange_, mean_[0], mean_[1], mean_[2], deviation_[0], deviation_[1], deviation_[2]})
    connect(box, &QDoubleSpinBox::valueChanged, this, &PreprocessingDialog::updateSummary);
}

void PreprocessingDialog::setPreprocessing(const Preprocessing& rule) {
  framing_->setCurrentIndex(framing_->findData(static_cast<int>(rule.framing)));
  cropFraction_->setValue(rule.cropFraction);
  inversion_->setCurrentIndex(inversion_->findData(static_cast<int>(rule.inversion)));
  channelOrder_->setCurrentIndex(channelOrder_->findData(static_cast<int>(rule.channelOrder)));
  valueRange_->setValue(rule.valueRange);
  for (size_t c = 0; c < 3; ++c) {
    mean_[c]->setValue(rule.mean[c]);
    deviation_[c]->setValue(rule.deviation[c]);
  }
  updateSummary();
}

Preprocessing PreprocessingDialog::preprocessing() const {
  Preprocessing rule;
  rule.framing = static_cast<PictureFraming>(framing_->currentData().toInt());
  rule.cropFraction = cropFraction_->value();
  rule.inversion = static_cast<PictureInversion>(inversion_->currentData().toInt());
  rule.channelOrder = static_cast<ChannelOrder>(channelOrder_->currentData().toInt());
  rule.valueRange = static_cast<float>(valueRange_->value());
  for (size_t c = 0; c < 3; ++c) {
    // A gray model has one channel: its value is the first box's.
    const size_t from = channels_ == 3 ? c : 0;
    rule.mean[c] = static_cast<float>(mean_[from]->value());
    rule.deviation[c] = static_cast<float>(deviation_[from]->value());
  }
  return rule;
}

void PreprocessingDialog::updateSummary() {
  cropFraction_->setEnabled(framing_->currentData().toInt() == static_cast<int>(PictureFraming::CentreCrop));
  summary_->setText(tr("Input = %1").arg(QString::fromStdString(describePreprocessing(preprocessing(), channels_))));
}

}  // namespace convscope::ui
