#include "ui/kernel/user_kernel_panel.h"

#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextDocumentFragment>
#include <QTimer>
#include <QVBoxLayout>

#include "app/core/data/image_set.h"
#include "ui/common/export.h"

namespace convscope::ui {
namespace {

QString stepName(KernelStep step) {
  switch (step) {
    case KernelStep::Compile:
      return QObject::tr("Compile");
    case KernelStep::Check:
      return QObject::tr("Check");
    case KernelStep::Time:
      return QObject::tr("Timing");
  }
  return {};
}

}  // namespace

UserKernelPanel::UserKernelPanel(JobRunner* jobs, QWidget* parent)
    : QWidget(parent),
      pipeline_(new KernelPipelineJob(jobs, this)),
      watcher_(new QFileSystemWatcher(this)),
      saveSettle_(new QTimer(this)),
      fileLabel_(new QLabel(this)),
      compile_(new QLabel(this)),
      check_(new QLabel(this)),
      time_(new QLabel(this)),
      details_(new QPlainTextEdit(this)),
      rerun_(new QPushButton(tr("Run again"), this)) {
  pipeline_->setDataFolder(QString::fromStdString(defaultDataFolder().string()));
  auto* open = new QPushButton(tr("Open your kernel…"), this);
  auto* exportButton = new QPushButton(tr("Export…"), this);
  rerun_->setEnabled(false);
  fileLabel_->setWordWrap(true);
  fileLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  fileLabel_->setText(
      tr("Write your own convolution kernel: copy examples/kernels/naive_conv.cu or tiled_conv.cu, "
         "open it here, and every save is compiled, checked against a double-precision reference "
         "and timed beside the course's variants (docs/your-kernel.md)."));
  details_->setReadOnly(true);
  useMonospaceFont();
  details_->setPlaceholderText(tr("Compiler errors and the check's report appear here."));

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(open);
  buttons->addWidget(rerun_);
  buttons->addStretch(1);
  buttons->addWidget(exportButton);
  auto* steps = new QGridLayout;
  int row = 0;
  for (KernelStep step : {KernelStep::Compile, KernelStep::Check, KernelStep::Time}) {
    auto* name = new QLabel("<b>" + stepName(step) + "</b>", this);
    steps->addWidget(name, row, 0, Qt::AlignTop);
    QLabel* status = statusOf(step);
    status->setWordWrap(true);
    status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status->setText(tr("–"));
    steps->addWidget(status, row++, 1);
  }
  steps->setColumnStretch(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(fileLabel_);
  layout->addLayout(steps);
  layout->addWidget(details_, 1);

  saveSettle_->setSingleShot(true);
  saveSettle_->setInterval(300);
  connect(saveSettle_, &QTimer::timeout, this, &UserKernelPanel::run);
  connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
    // An editor that saves by writing a new file and renaming it ends the watch: watch again.
    if (!watcher_->files().contains(path) && QFileInfo::exists(path)) watcher_->addPath(path);
    saveSettle_->start();
  });
  connect(open, &QPushButton::clicked, this, &UserKernelPanel::openFileDialog);
  connect(rerun_, &QPushButton::clicked, this, &UserKernelPanel::run);
  connect(exportButton, &QPushButton::clicked, this, [this] {
    const QString path = askExportPath(this, QFileInfo(file_).completeBaseName() + "-check");
    if (!path.isEmpty()) exportTo(path);
  });
  connect(pipeline_, &KernelPipelineJob::stepStarted, this, &UserKernelPanel::showStarted);
  connect(pipeline_, &KernelPipelineJob::stepFinished, this, &UserKernelPanel::showFinished);
  connect(pipeline_, &KernelPipelineJob::compiled, this, [this](const QString& id, const QString& name) {
    id_ = id;
    name_ = name;
    emit variantReady(id, name, tr("checking…"));
  });
  connect(pipeline_, &KernelPipelineJob::checked, this,
          [this](const QString& id, bool, const QString& why) { emit variantReady(id, name_, why); });
  connect(pipeline_, &KernelPipelineJob::timed, this, &UserKernelPanel::timed);
}

void UserKernelPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) useMonospaceFont();  // presentation mode on or off
}

// The compiler's text in a fixed-width font at the size of the rest (large in presentation mode).
void UserKernelPanel::useMonospaceFont() {
  QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  fixed.setPointSizeF(font().pointSizeF() > 0 ? font().pointSizeF() : fixed.pointSizeF());
  if (details_->font() != fixed) details_->setFont(fixed);
}

QLabel*& UserKernelPanel::statusOf(KernelStep step) {
  return step == KernelStep::Compile ? compile_ : step == KernelStep::Check ? check_ : time_;
}

void UserKernelPanel::openFileDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open your kernel"), QFileInfo(file_).absolutePath(),
                                                    tr("CUDA kernels (*.cu)"));
  if (!path.isEmpty()) openKernel(path);
}

void UserKernelPanel::openKernel(const QString& file) {
  if (!file_.isEmpty()) watcher_->removePath(file_);
  file_ = QFileInfo(file).absoluteFilePath();
  watcher_->addPath(file_);
  fileLabel_->setText(tr("<b>%1</b> — watched: every save compiles, checks and times it again")
                          .arg(QFileInfo(file_).fileName().toHtmlEscaped()));
  fileLabel_->setToolTip(file_);
  rerun_->setEnabled(true);
  run();
}

void UserKernelPanel::run() {
  if (file_.isEmpty()) return;
  for (KernelStep step : {KernelStep::Compile, KernelStep::Check, KernelStep::Time}) statusOf(step)->setText(tr("–"));
  details_->clear();
  pipeline_->start(file_);
}

void UserKernelPanel::showStarted(KernelStep step) {
  statusOf(step)->setText(step == KernelStep::Compile ? tr("compiling…")
                          : step == KernelStep::Check ? tr("checking in a child process…")
                                                      : tr("timing at batches 100, 1,000 and 10,000…"));
}

void UserKernelPanel::showFinished(const KernelStepResult& result) {
  const QString mark = result.skipped ? tr("not run") : result.ok ? tr("✔ ") : tr("✘ ");
  const QString colour = result.skipped ? "gray" : result.ok ? "#2ca02c" : "#d62728";
  statusOf(result.step)
      ->setText(QString("<span style='color:%1'><b>%2</b></span> %3")
                    .arg(colour, mark.toHtmlEscaped(), result.summary.toHtmlEscaped()));
  if (!result.details.isEmpty() && (!result.ok || details_->toPlainText().isEmpty()))
    details_->appendPlainText(stepName(result.step) + ":\n" + result.details.trimmed() + "\n");
}

QString UserKernelPanel::stepText(KernelStep step) const {
  QLabel* label = const_cast<UserKernelPanel*>(this)->statusOf(step);
  return stepName(step) + ": " + QTextDocumentFragment::fromHtml(label->text()).toPlainText();
}

QString UserKernelPanel::detailsText() const {
  return details_->toPlainText();
}

QString UserKernelPanel::exportTo(const QString& path) {
  return exportWidget(*this, path);
}

}  // namespace convscope::ui
