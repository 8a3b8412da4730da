#include "ui/profile/profile_panel.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/kernel_profile_json.h"
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

ProfilePanel::ProfilePanel(JobRunner* jobs, QWidget* parent)
    : QWidget(parent),
      profile_(new ProfileJob(jobs, this)),
      message_(new QLabel(this)),
      batch_(new QSpinBox(this)),
      run_(new QPushButton(tr("Profile one inference"), this)),
      open_(new QPushButton(tr("Open profile…"), this)),
      example_(new QPushButton(tr("Open the H100 example"), this)),
      table_(new QTableWidget(this)) {
  open_->setToolTip(tr("Open a kernel table saved by 'convscope-cli profile --json FILE' (on a GPU machine)"));
  connect(open_, &QPushButton::clicked, this, &ProfilePanel::openAsked);
  example_->setToolTip(tr("The course's kernel table for gpu-restrict-unroll at batch 10,000, measured on an H100"));
  connect(example_, &QPushButton::clicked, this, [this] {
    const QString copy = exampleFolder_.filePath(QFileInfo(kExampleResource).fileName());
    QFile::remove(copy);
    if (!exampleFolder_.isValid() || !QFile::copy(kExampleResource, copy)) {
      emit errorOccurred(tr("Profile: the built-in example could not be copied to %1").arg(exampleFolder_.path()));
      return;
    }
    if (const QString error = openProfile(copy); !error.isEmpty()) emit errorOccurred(error);
  });
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
  connect(profile_, &ProfileJob::finished, this, &ProfilePanel::showResult);
  connect(profile_, &ProfileJob::failed, this, [this](const QString& error) {
    refresh();
    emit errorOccurred(tr("Profile: %1").arg(error));
  });

  auto* row = new QHBoxLayout;
  row->addWidget(batch_);
  row->addWidget(run_);
  row->addStretch(1);
  row->addWidget(open_);
  row->addWidget(example_);
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
  if (!shownFromFile_) {  // a table measured here was for the variant before; an opened file stays
    table_->setRowCount(0);
    shown_.clear();
  }
  refresh();
}

bool ProfilePanel::canProfile() const {
  if (variant_.isEmpty() || !model_ || !images_) return false;
  const ConvVariant& v = findConvVariant(variant_.toStdString());
  return v.runsOnGpu() && v.unavailableReason().empty();
}

QString ProfilePanel::message() const {
  return message_->text();
}

void ProfilePanel::refresh() {
  const bool running = profile_->running();
  run_->setEnabled(canProfile() && !running);
  batch_->setEnabled(canProfile() && !running);
  if (images_) batch_->setMaximum(std::max(1, images_->count()));
  if (!shown_.isEmpty() && !running) {
    message_->setText(shown_);
    return;
  }
  const GpuInfo& gpu = gpuInfo();
  example_->setVisible(!gpu.usable);
  const QString openHint =
      tr("To read a profile measured elsewhere, save it there with "
         "<tt>convscope-cli profile --variant ID --json FILE</tt> and open it here "
         "(<b>Open profile…</b>).");
  if (!gpu.usable) {
    // Say why the table is empty first: no variant choice can fill it on this machine.
    message_->setText(tr("<b>No GPU on this machine:</b> %1. The profiler times GPU kernels, so it cannot run "
                         "here.<br>%2 <b>Open the H100 example</b> shows one measured on an H100.")
                          .arg(QString::fromStdString(gpu.unusableReason).toHtmlEscaped(), openHint));
    return;
  }
  if (variant_.isEmpty()) return;
  const ConvVariant& v = findConvVariant(variant_.toStdString());
  if (!v.runsOnGpu()) {
    message_->setText(tr("<b>The profiler times GPU kernels.</b> '%1' runs on the CPU; choose a GPU variant.")
                          .arg(variantDisplayName(v.id).toHtmlEscaped()));
  } else if (!canProfile()) {
    message_->setText(!images_ ? tr("The profiler runs the first N test images, and no test set is loaded.")
                               : tr("'%1' cannot run here.").arg(variantDisplayName(v.id).toHtmlEscaped()));
  } else if (running) {
    message_->setText(tr("Profiling %1 …").arg(variantDisplayName(v.id).toHtmlEscaped()));
  } else {
    message_->setText(
        tr("One traced inference of %1 on %2: every kernel launch and memory copy timed with CUDA events.")
            .arg(variantDisplayName(v.id).toHtmlEscaped(), QString::fromStdString(gpu.name).toHtmlEscaped()));
  }
}

bool ProfilePanel::profileRunning() const {
  return profile_->running();
}

void ProfilePanel::cancelProfile() {
  profile_->cancel();
}

void ProfilePanel::runProfile() {
  if (!canProfile() || profile_->running()) return;
  table_->setRowCount(0);
  shown_.clear();
  shownFromFile_ = false;
  profile_->start(model_, variant_.toStdString(), images_, batch_->value());
  refresh();
}

void ProfilePanel::fillTable(const std::vector<KernelRow>& rows) {
  table_->setRowCount(static_cast<int>(rows.size()));
  bool firstKernel = true, firstCopy = true;
  for (size_t i = 0; i < rows.size(); ++i) {
    const KernelRow& r = rows[i];
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
}

void ProfilePanel::showResult(std::shared_ptr<const ProfileResult> result) {
  fillTable(result->rows);
  shownFromFile_ = false;
  shown_ = tr("<b>%1</b>, model %2, batch %3, on %4")
               .arg(variantDisplayName(result->variant).toHtmlEscaped(),
                    QString::fromStdString(result->modelName).toHtmlEscaped())
               .arg(result->batch)
               .arg(QString::fromStdString(result->deviceName).toHtmlEscaped());
  refresh();
}

QString ProfilePanel::openProfile(const QString& path) {
  KernelProfile profile;
  try {
    profile = readKernelProfileJson(path.toStdString());
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  fillTable(profile.rows);
  shownFromFile_ = true;
  shown_ = tr("<b>Saved profile %1</b>: %2, model %3, batch %4, on %5 · %6")
               .arg(QFileInfo(path).fileName().toHtmlEscaped(), variantDisplayName(profile.variant).toHtmlEscaped(),
                    QString::fromStdString(profile.model).toHtmlEscaped())
               .arg(profile.batch)
               .arg(QString::fromStdString(profile.device).toHtmlEscaped(),
                    QString::fromStdString(profile.date).toHtmlEscaped());
  refresh();
  return {};
}

void ProfilePanel::openAsked() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a profile"), {}, tr("Profile JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  if (const QString error = openProfile(path); !error.isEmpty()) emit errorOccurred(error);
}

}  // namespace convscope::ui
