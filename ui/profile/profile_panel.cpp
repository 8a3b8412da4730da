#include "ui/profile/profile_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "conv/conv_registry.h"
#include "gpu_device.h"
#include "ui/charts/benchmark_series.h"

namespace convscope::ui {
namespace {

QString formatTime(double ms) {
  return ms >= 1.0 ? QString::number(ms, 'f', 4) + " ms" : QString::number(ms * 1e3, 'f', 3) + " µs";
}

QTableWidgetItem* rightAligned(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

ProfilePanel::ProfilePanel(QWidget* parent)
    : QWidget(parent),
      worker_(new ProfileWorker(this)),
      message_(new QLabel(this)),
      batch_(new QSpinBox(this)),
      run_(new QPushButton(tr("Profile one inference"), this)),
      table_(new QTableWidget(this)) {
  message_->setWordWrap(true);
  message_->setTextFormat(Qt::RichText);
  batch_->setRange(1, 10000);
  batch_->setValue(1000);
  batch_->setPrefix(tr("batch "));
  batch_->setToolTip(tr("The first N test images, as one batch"));
  table_->setColumnCount(8);
  table_->setHorizontalHeaderLabels(
      {tr("Type"), tr("Time (%)"), tr("Time"), tr("Calls"), tr("Avg"), tr("Min"), tr("Max"), tr("Name")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  connect(run_, &QPushButton::clicked, this, &ProfilePanel::runProfile);
  connect(worker_, &ProfileWorker::finished, this, &ProfilePanel::showResult);
  connect(worker_, &ProfileWorker::failed, this, [this](const QString& error) {
    refresh();
    emit errorOccurred(tr("Profile: %1").arg(error));
  });

  auto* row = new QHBoxLayout;
  row->addWidget(batch_);
  row->addWidget(run_);
  row->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(message_);
  layout->addLayout(row);
  layout->addWidget(table_, 1);
  refresh();
}

void ProfilePanel::setModel(std::shared_ptr<const Model> model) {
  model_ = std::move(model);
  refresh();
}

void ProfilePanel::setImageSet(std::shared_ptr<const ImageSet> images) {
  images_ = std::move(images);
  refresh();
}

void ProfilePanel::setVariant(const QString& variantId) {
  variant_ = variantId;
  table_->setRowCount(0);
  refresh();
}

bool ProfilePanel::canProfile() const {
  if (variant_.isEmpty() || !model_ || !images_) return false;
  const ConvVariant& v = findConvVariant(variant_.toStdString());
  return v.runsOnGpu && v.unavailableReason().empty();
}

QString ProfilePanel::message() const {
  return message_->text();
}

void ProfilePanel::refresh() {
  const bool running = worker_->running();
  run_->setEnabled(canProfile() && !running);
  batch_->setEnabled(canProfile() && !running);
  if (images_) batch_->setMaximum(std::max(1, images_->count()));
  if (variant_.isEmpty()) return;
  const ConvVariant& v = findConvVariant(variant_.toStdString());
  const gpu::GpuDevice& gpu = gpu::gpuDevice();
  if (!v.runsOnGpu) {
    QString text = tr("<b>The profiler times GPU kernels.</b> '%1' runs on the CPU; choose a GPU variant.")
                       .arg(variantDisplayName(v.id).toHtmlEscaped());
    if (!gpu.usable)
      text += tr("<br>This machine has none: %1. Run <tt>convscope-cli profile</tt> on a GPU machine, "
                 "or open its benchmark JSON in the Timing tab.")
                  .arg(QString::fromStdString(gpu.unusableReason).toHtmlEscaped());
    message_->setText(text);
  } else if (!canProfile()) {
    message_->setText(!images_ ? tr("The profiler runs the first N test images, and no test set is loaded.")
                               : tr("'%1' cannot run here.").arg(variantDisplayName(v.id).toHtmlEscaped()));
  } else if (running) {
    message_->setText(tr("Profiling %1 …").arg(variantDisplayName(v.id).toHtmlEscaped()));
  } else if (table_->rowCount() == 0) {
    message_->setText(
        tr("One traced inference of %1 on %2: every kernel launch and memory copy timed with CUDA events.")
            .arg(variantDisplayName(v.id).toHtmlEscaped(), QString::fromStdString(gpu.name).toHtmlEscaped()));
  }
}

bool ProfilePanel::profileRunning() const {
  return worker_->running();
}

void ProfilePanel::cancelProfile() {
  worker_->cancel();
}

void ProfilePanel::runProfile() {
  if (!canProfile() || worker_->running()) return;
  table_->setRowCount(0);
  worker_->start(model_, variant_.toStdString(), images_, batch_->value());
  refresh();
}

void ProfilePanel::showResult(std::shared_ptr<const ProfileResult> result) {
  table_->setRowCount(static_cast<int>(result->rows.size()));
  bool firstKernel = true, firstCopy = true;
  for (size_t i = 0; i < result->rows.size(); ++i) {
    const KernelRow& r = result->rows[i];
    const int row = static_cast<int>(i);
    QString type;
    if (!r.isCopy && firstKernel) type = tr("GPU activities"), firstKernel = false;
    if (r.isCopy && firstCopy) type = tr("Memory copies"), firstCopy = false;
    table_->setItem(row, 0, new QTableWidgetItem(type));
    table_->setItem(row, 1, rightAligned(QString::number(100.0 * r.share, 'f', 2) + " %"));
    table_->setItem(row, 2, rightAligned(formatTime(r.totalMs)));
    table_->setItem(row, 3, rightAligned(QString::number(r.calls)));
    table_->setItem(row, 4, rightAligned(formatTime(r.averageMs())));
    table_->setItem(row, 5, rightAligned(formatTime(r.minMs)));
    table_->setItem(row, 6, rightAligned(formatTime(r.maxMs)));
    table_->setItem(row, 7, new QTableWidgetItem(QString::fromStdString(r.name)));
  }
  refresh();
  message_->setText(tr("<b>%1</b>, model %2, batch %3, on %4")
                        .arg(variantDisplayName(result->variant).toHtmlEscaped(),
                             QString::fromStdString(result->modelName).toHtmlEscaped())
                        .arg(result->batch)
                        .arg(QString::fromStdString(result->deviceName).toHtmlEscaped()));
}

}  // namespace convscope::ui
