#include "ui/timing/sweep_controls.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

#include "app/core/conv/variant_table.h"

namespace convscope::ui {

SweepControls::SweepControls(QWidget* parent)
    : QWidget(parent),
      variants_(new QListWidget(this)),
      batches_(new QLineEdit(this)),
      repeats_(new QSpinBox(this)),
      warmups_(new QSpinBox(this)),
      run_(new QPushButton(tr("Run sweep"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)) {
  for (const ConvVariant& v : convVariants()) {
    auto* item = new QListWidgetItem(QString::fromStdString(v.displayName), variants_);
    item->setData(Qt::UserRole, QString::fromStdString(v.id));
    const std::string reason = v.unavailableReason();
    item->setFlags(reason.empty() ? Qt::ItemIsEnabled | Qt::ItemIsUserCheckable : Qt::ItemFlags());
    item->setCheckState(reason.empty() ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(reason.empty() ? QString::fromStdString(v.description)
                                    : tr("Unavailable here: %1").arg(QString::fromStdString(reason)));
  }
  variants_->setMinimumHeight(120);
  batches_->setText("1,10,100,1000");
  batches_->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9, ]*"), batches_));
  batches_->setToolTip(tr("Batch sizes, separated by commas: the first N test images as one batch"));
  repeats_->setRange(1, 1000);
  repeats_->setValue(5);
  repeats_->setToolTip(tr("Timed inferences per variant and batch size; the median is plotted"));
  warmups_->setRange(0, 100);
  warmups_->setValue(1);
  cancel_->setEnabled(false);
  progress_->setRange(0, 100);
  progress_->setValue(0);
  status_->setWordWrap(true);
  connect(run_, &QPushButton::clicked, this, &SweepControls::runClicked);
  connect(cancel_, &QPushButton::clicked, this, &SweepControls::cancelClicked);

  auto* form = new QFormLayout;
  form->addRow(tr("Batch sizes"), batches_);
  form->addRow(tr("Repetitions"), repeats_);
  form->addRow(tr("Warm-ups"), warmups_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_, 1);
  buttons->addWidget(cancel_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(new QLabel(tr("Variants"), this));
  layout->addWidget(variants_, 1);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(progress_);
  layout->addWidget(status_);
}

int SweepControls::namesWidth() const {
  const int scrollBar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, variants_);
  return variants_->sizeHintForColumn(0) + 2 * variants_->frameWidth() + scrollBar + 4;
}

bool SweepControls::options(BenchmarkOptions* options, QString* error) const {
  options->variants.clear();
  options->batches.clear();
  for (const QString& id : checkedVariants()) options->variants.push_back(id.toStdString());
  for (const QString& part : batches_->text().split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    const int batch = part.trimmed().toInt(&ok);
    if (!ok || batch < 1) {
      *error = tr("Batch sizes: '%1' is not a positive whole number").arg(part.trimmed());
      return false;
    }
    options->batches.push_back(batch);
  }
  if (options->variants.empty()) {
    *error = tr("Choose at least one variant to time");
    return false;
  }
  if (options->batches.empty()) {
    *error = tr("Give at least one batch size");
    return false;
  }
  options->repeats = repeats_->value();
  options->warmups = warmups_->value();
  return true;
}

void SweepControls::setCheckedVariants(const QStringList& ids) {
  for (int i = 0; i < variants_->count(); ++i) {
    QListWidgetItem* item = variants_->item(i);
    if (item->flags() & Qt::ItemIsUserCheckable)
      item->setCheckState(ids.contains(item->data(Qt::UserRole).toString()) ? Qt::Checked : Qt::Unchecked);
  }
}

QStringList SweepControls::checkedVariants() const {
  QStringList ids;
  for (int i = 0; i < variants_->count(); ++i)
    if (variants_->item(i)->checkState() == Qt::Checked) ids << variants_->item(i)->data(Qt::UserRole).toString();
  return ids;
}

void SweepControls::setBatches(const QString& text) {
  batches_->setText(text);
}
void SweepControls::setRepeats(int repeats) {
  repeats_->setValue(repeats);  // clamped to the spin box's range
}

QString SweepControls::batchesText() const {
  return batches_->text();
}

void SweepControls::setRunning(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  variants_->setEnabled(!running);
  batches_->setEnabled(!running);
  repeats_->setEnabled(!running);
  warmups_->setEnabled(!running);
  if (running) progress_->setValue(0);
}

QString SweepControls::statusText() const {
  return status_->text();
}

void SweepControls::setProgress(int percent, const QString& message) {
  if (percent >= 0) progress_->setValue(percent);  // -1: only the message changes
  status_->setText(message);
}

}  // namespace convscope::ui
