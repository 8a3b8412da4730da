#include "ui/kernel/user_kernel_panel.h"

#include <Qsci/qsciscintilla.h>

#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QShortcut>
#include <QSplitter>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocumentFragment>
#include <QTimer>
#include <QVBoxLayout>

#include <optional>

#include "app/core/data/image_set.h"
#include "ui/common/error_banner.h"
#include "ui/common/export.h"
#include "ui/jobs/kernel_inspection_job.h"
#include "ui/kernel/failure_pictures.h"
#include "ui/kernel/kernel_editor.h"
#include "ui/kernel/kernel_history_view.h"
#include "ui/kernel/kernel_listing_pane.h"
#include "ui/kernel/kernel_resources_view.h"

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

// The file's text, or why it cannot be read.
std::optional<QString> readText(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    *error = file.errorString();
    return std::nullopt;
  }
  return QString::fromUtf8(file.readAll());
}

// Written whole or not at all (a temporary file renamed over it): a failed save never leaves
// half a kernel on disk.
bool writeText(const QString& path, const QString& text, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
    *error = file.errorString();
    return false;
  }
  return true;
}

QString askSavePath(QWidget* parent, const QString& suggested) {
  return QFileDialog::getSaveFileName(parent, QObject::tr("Save your new kernel as"), suggested,
                                      QObject::tr("CUDA kernels (*.cu)"));
}

bool askKeepEditorOverDisk(QWidget* parent, const QString& file) {
  QMessageBox box(QMessageBox::Question, QObject::tr("The kernel changed on disk"),
                  QObject::tr("%1 was changed by another program, and the editor holds edits not yet saved.")
                      .arg(QFileInfo(file).fileName()),
                  QMessageBox::NoButton, parent);
  box.setInformativeText(
      QObject::tr("Keep the editor's text (a save then overwrites the file), or load the file "
                  "(your edits stay reachable with Undo)?"));
  QPushButton* keep = box.addButton(QObject::tr("Keep my edits"), QMessageBox::AcceptRole);
  box.addButton(QObject::tr("Load the file"), QMessageBox::DestructiveRole);
  box.setDefaultButton(keep);
  box.exec();
  return box.clickedButton() == keep;
}

UserKernelPanel::UnsavedEditsChoice askAboutUnsavedEdits(QWidget* parent, const QString& file) {
  const auto answer = QMessageBox::question(
      parent, QObject::tr("Unsaved edits"),
      QObject::tr("Your kernel %1 has edits that are not saved. Save them?").arg(QFileInfo(file).fileName()),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  return answer == QMessageBox::Save      ? UserKernelPanel::UnsavedEditsChoice::Save
         : answer == QMessageBox::Discard ? UserKernelPanel::UnsavedEditsChoice::Discard
                                          : UserKernelPanel::UnsavedEditsChoice::Cancel;
}

}  // namespace

UserKernelPanel::UserKernelPanel(JobRunner* jobs, QWidget* parent)
    : QWidget(parent),
      pipeline_(new KernelPipelineJob(jobs, this)),
      watcher_(new QFileSystemWatcher(this)),
      saveSettle_(new QTimer(this)),
      error_(new ErrorBanner(this)),
      fileLabel_(new QLabel(this)),
      editor_(new KernelEditor(this)),
      save_(new QPushButton(tr("Save and run"), this)),
      compile_(new QLabel(this)),
      check_(new QLabel(this)),
      time_(new QLabel(this)),
      failurePictures_(new FailurePictures(this)),
      history_(new KernelHistoryView(this)),
      diagnostics_(new QListWidget(this)),
      details_(new QPlainTextEdit(this)),
      rerun_(new QPushButton(tr("Run again"), this)),
      inspection_(new KernelInspectionJob(jobs, this)),
      resources_(new KernelResourcesView(this)),
      listing_(new KernelListingPane(this)),
      chooseSavePath_([this](const QString& suggested) { return askSavePath(this, suggested); }),
      keepEditorOverDisk_([this](const QString& file) { return askKeepEditorOverDisk(this, file); }),
      askAboutUnsavedEdits_([this](const QString& file) { return askAboutUnsavedEdits(this, file); }) {
  pipeline_->setDataFolder(QString::fromStdString(defaultDataFolder().string()));
  auto* open = new QPushButton(tr("Open your kernel…"), this);
  auto* fromTemplate = new QPushButton(tr("New from template"), this);
  auto* templates = new QMenu(fromTemplate);
  templates->addAction(tr("Naive: one thread per output"), this, [this] { newFromTemplate(KernelTemplate::Naive); });
  templates->addAction(tr("Tiled: a shared-memory input tile"), this,
                       [this] { newFromTemplate(KernelTemplate::Tiled); });
  fromTemplate->setMenu(templates);
  auto* exportButton = new QPushButton(tr("Export…"), this);
  save_->setToolTip(tr("Write the file and compile, check and time it (Ctrl+S)"));
  save_->setEnabled(false);
  rerun_->setEnabled(false);
  fileLabel_->setWordWrap(true);
  fileLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  fileLabel_->setText(
      tr("Write your own convolution kernel: start from a template (New from template), or open a .cu file; "
         "every save is compiled, checked against a double-precision reference and timed beside the "
         "course's variants (docs/your-kernel.md)."));
  editor_->editor()->setReadOnly(true);  // until a file is open: there is nowhere to save
  details_->setReadOnly(true);
  details_->setPlaceholderText(tr("The compiler's output and the check's report appear here."));
  diagnostics_->setToolTip(tr("Click an error to go to its line"));
  // A long message wraps rather than hiding behind a horizontal scroll bar.
  diagnostics_->setWordWrap(true);
  diagnostics_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  diagnostics_->setResizeMode(QListView::Adjust);
  useMonospaceFont();

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(fromTemplate);
  buttons->addWidget(open);
  buttons->addWidget(save_);
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
  // The editor on the left; the steps, the errors (click: go to the line) and the details on the right.
  auto* results = new QWidget(this);
  auto* resultsLayout = new QVBoxLayout(results);
  resultsLayout->setContentsMargins(0, 0, 0, 0);
  resultsLayout->addLayout(steps);
  failurePictures_->hide();
  resultsLayout->addWidget(failurePictures_, 3);  // under the check's step; most of the room when shown
  resultsLayout->addWidget(new QLabel(tr("<b>Errors</b>"), results));
  resultsLayout->addWidget(diagnostics_);
  resultsLayout->addWidget(details_, 1);
  // Two columns that share the width by what they need: the editor, which wants a whole line of
  // code (about 80 characters), and beside it one set of tabs: the steps, the kernel's history
  // (every version that compiled, its op time and diffs), and why it is slow (its resources and
  // what the line under the cursor became). Three columns left the editor 28 characters at
  // 1024x700.
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(editor_);
  auto* whySlow = new QWidget(this);
  auto* whySlowLayout = new QVBoxLayout(whySlow);
  whySlowLayout->setContentsMargins(0, 0, 0, 0);
  whySlowLayout->addWidget(resources_);
  whySlowLayout->addWidget(listing_, 1);
  auto* side = new QTabWidget(this);
  side->addTab(results, tr("Steps"));
  side->addTab(history_, tr("History"));
  side->addTab(whySlow, tr("PTX / SASS"));
  side->setTabToolTip(2, tr("The kernel's registers, shared memory and occupancy, and the PTX or SASS of the "
                            "source line under the cursor"));
  sideTabs_ = side;
  connect(pipeline_, &KernelPipelineJob::sourceCompiled, history_, &KernelHistoryView::recordCompiled);
  connect(pipeline_, &KernelPipelineJob::stepFinished, history_, [this](const KernelStepResult& result) {
    if (result.step == KernelStep::Check && !result.skipped) history_->recordCheck(result.ok, result.summary);
  });
  connect(pipeline_, &KernelPipelineJob::timed, history_, [this](const std::shared_ptr<const BenchmarkReport>& report) {
    if (report) history_->recordTiming(*report);
  });
  split->addWidget(side);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 1);
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(error_);
  layout->addLayout(buttons);
  layout->addWidget(fileLabel_);
  layout->addWidget(split, 1);

  auto* saveKey = new QShortcut(QKeySequence::Save, this, this, &UserKernelPanel::save);
  saveKey->setContext(Qt::WidgetWithChildrenShortcut);
  saveSettle_->setSingleShot(true);
  saveSettle_->setInterval(300);
  connect(saveSettle_, &QTimer::timeout, this, &UserKernelPanel::reactToDiskChange);
  connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
    // An editor that saves by writing a new file and renaming it ends the watch: watch again.
    if (!watcher_->files().contains(path) && QFileInfo::exists(path)) watcher_->addPath(path);
    saveSettle_->start();
  });
  connect(open, &QPushButton::clicked, this, &UserKernelPanel::openFileDialog);
  connect(save_, &QPushButton::clicked, this, &UserKernelPanel::save);
  connect(rerun_, &QPushButton::clicked, this, &UserKernelPanel::run);
  connect(editor_, &KernelEditor::modificationChanged, this, &UserKernelPanel::showFileState);
  const auto goToDiagnostic = [this](QListWidgetItem* item) {
    if (const int line = item->data(Qt::UserRole).toInt(); line > 0) editor_->goToLine(line);
  };
  connect(diagnostics_, &QListWidget::itemClicked, this, goToDiagnostic);
  connect(diagnostics_, &QListWidget::itemActivated, this, goToDiagnostic);
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
  followWhySlowViews();
}

void UserKernelPanel::followWhySlowViews() {
  connect(pipeline_, &KernelPipelineJob::stepStarted, this, [this](KernelStep step) {
    if (step != KernelStep::Compile) return;
    inspection_->cancel();  // of the text before this save
    resources_->showInspecting();
    listing_->showInspecting();
  });
  connect(pipeline_, &KernelPipelineJob::stepFinished, this, [this](const KernelStepResult& result) {
    if (result.step != KernelStep::Compile || result.ok) return;
    const QString why = tr("%1 does not compile: see the errors").arg(QFileInfo(file_).fileName());
    KernelInspectionResult none;
    none.problem = why;
    resources_->setInspection(none);
    listing_->setInspection(none);
  });
  connect(pipeline_, &KernelPipelineJob::compiled, this, [this] { inspection_->start(file_); });
  connect(inspection_, &KernelInspectionJob::inspected, this,
          [this](std::shared_ptr<const KernelInspectionResult> result) {
            if (result->file != file_) return;  // of a file no longer open
            resources_->setInspection(*result);
            listing_->setInspection(*result);
          });
  connect(editor_->editor(), &QsciScintilla::cursorPositionChanged, this,
          [this](int line, int) { listing_->showSourceLine(line + 1); });  // Scintilla counts from 0
}

void UserKernelPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) useMonospaceFont();  // presentation mode on or off
}

// The kernel and the compiler's text in a fixed-width font at the size of the rest (large in presentation mode).
void UserKernelPanel::useMonospaceFont() {
  QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  fixed.setPointSizeF(font().pointSizeF() > 0 ? font().pointSizeF() : fixed.pointSizeF());
  if (details_->font() != fixed) details_->setFont(fixed);
  if (diagnostics_->font() != fixed) {
    diagnostics_->setFont(fixed);
    // Six errors in view (more scroll): the list is for jumping to a line, the details for reading.
    diagnostics_->setFixedHeight(QFontMetrics(fixed).lineSpacing() * 6 + 2 * diagnostics_->frameWidth() + 4);
  }
  editor_->setEditorFont(fixed);
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
  const QString path = QFileInfo(file).absoluteFilePath();
  if (!askBeforeLeavingUnsavedEdits()) return;  // also for this file again: reading it replaces the edits
  QString why;
  const std::optional<QString> text = readText(path, &why);
  if (!text) {
    error_->showError(tr("Cannot open your kernel %1: %2").arg(QDir::toNativeSeparators(path), why));
    return;
  }
  error_->dismiss();
  if (!file_.isEmpty()) watcher_->removePath(file_);
  file_ = path;
  watcher_->addPath(file_);
  diskText_ = *text;
  editor_->setTextFromFile(*text);
  editor_->editor()->setReadOnly(false);
  fileLabel_->setToolTip(file_);
  history_->setKernelFile(file_);
  save_->setEnabled(true);
  rerun_->setEnabled(true);
  showFileState();
  run();
}

QString UserKernelPanel::templateSource(KernelTemplate which) {
  QFile file(which == KernelTemplate::Naive ? ":/kernel-templates/naive_conv.cu" : ":/kernel-templates/tiled_conv.cu");
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

bool UserKernelPanel::newFromTemplate(KernelTemplate which) {
  if (!askBeforeLeavingUnsavedEdits()) return false;
  const QString folder = file_.isEmpty() ? QDir::homePath() : QFileInfo(file_).absolutePath();
  QString path = chooseSavePath_(QDir(folder).filePath("my_conv.cu"));
  if (path.isEmpty()) return false;
  if (QFileInfo(path).suffix().toLower() != "cu") path += ".cu";  // the window opens kernels by their .cu
  const QString source = templateSource(which);
  QString why = source.isEmpty() ? tr("this build has no copy of the template") : QString();
  if (source.isEmpty() || !writeText(path, source, &why)) {
    error_->showError(tr("Cannot write the new kernel %1: %2").arg(QDir::toNativeSeparators(path), why));
    return false;
  }
  editor_->setModified(false);  // the edits were saved or discarded just above
  openKernel(path);
  return file_ == QFileInfo(path).absoluteFilePath();
}

bool UserKernelPanel::save() {
  if (file_.isEmpty()) return false;
  const QString text = editor_->text();
  QString why;
  // Known before the write, so the watcher's echo of this save is recognised as no change.
  const QString previousDiskText = diskText_;
  diskText_ = text;
  if (!writeText(file_, text, &why)) {
    diskText_ = previousDiskText;
    error_->showError(tr("Cannot save your kernel %1: %2 (your edits are still in the editor)")
                          .arg(QDir::toNativeSeparators(file_), why));
    return false;
  }
  // A save by rename ends the watch on some systems: watch the new file.
  if (!watcher_->files().contains(file_)) watcher_->addPath(file_);
  error_->dismiss();
  editor_->setModified(false);
  run();
  return true;
}

bool UserKernelPanel::confirmClose() {
  return askBeforeLeavingUnsavedEdits();
}

bool UserKernelPanel::askBeforeLeavingUnsavedEdits() {
  if (file_.isEmpty() || !editor_->isModified()) return true;
  switch (askAboutUnsavedEdits_(file_)) {
    case UnsavedEditsChoice::Save:
      return save();
    case UnsavedEditsChoice::Discard:
      return true;
    case UnsavedEditsChoice::Cancel:
      return false;
  }
  return false;
}

// The file changed on disk (another editor saved it, or this panel did): the editor follows it
// unless it holds edits of its own, and then the student chooses.
void UserKernelPanel::reactToDiskChange() {
  if (file_.isEmpty()) return;
  QString why;
  const std::optional<QString> text = readText(file_, &why);
  if (!text) {
    error_->showError(tr("Your kernel %1 cannot be read any more (%2); the editor keeps its text, and Save "
                         "writes it again.")
                          .arg(QDir::toNativeSeparators(file_), why));
    editor_->setModified(true);
    return;
  }
  if (*text == diskText_) return;  // this panel's own save, or a write that changed nothing
  diskText_ = *text;
  if (editor_->isModified() && keepEditorOverDisk_(file_)) return;  // the next save overwrites the file
  // Replaced as one undoable edit, so the text it replaces stays reachable with Undo.
  QsciScintilla* text_editor = editor_->editor();
  int line = 0, index = 0;
  text_editor->getCursorPosition(&line, &index);
  const int firstVisible = text_editor->firstVisibleLine();
  text_editor->beginUndoAction();
  text_editor->selectAll();
  text_editor->replaceSelectedText(*text);
  text_editor->endUndoAction();
  text_editor->setCursorPosition(std::min(line, text_editor->lines() - 1), index);
  text_editor->setFirstVisibleLine(firstVisible);
  editor_->setModified(false);
  run();
}

void UserKernelPanel::showFileState() {
  if (file_.isEmpty()) return;
  const QString name = QFileInfo(file_).fileName().toHtmlEscaped();
  fileLabel_->setText(
      editor_->isModified()
          ? tr("<b>%1</b> — edited, not saved: Ctrl+S saves it and compiles, checks and times it").arg(name)
          : tr("<b>%1</b> — saved; watched: every save (here or in another editor) compiles, "
               "checks and times it again")
                .arg(name));
}

void UserKernelPanel::run() {
  if (file_.isEmpty()) return;
  for (KernelStep step : {KernelStep::Compile, KernelStep::Check, KernelStep::Time}) statusOf(step)->setText(tr("–"));
  details_->clear();
  showDiagnostics({});
  failurePictures_->hide();  // they were of the last check
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
  if (result.step == KernelStep::Compile) showDiagnostics(result.diagnostics);
  if (result.step == KernelStep::Check) {
    if (!result.ok && result.failureMap) failurePictures_->setFailureMap(*result.failureMap);
    failurePictures_->setVisible(!result.ok && result.failureMap);
  }
  if (!result.details.isEmpty() && (!result.ok || details_->toPlainText().isEmpty())) {
    const int firstNewBlock = details_->toPlainText().isEmpty() ? 0 : details_->blockCount();
    details_->appendPlainText(stepName(result.step) + ":\n" + result.details.trimmed() + "\n");
    // In view from its start (the first error), not scrolled to the compiler's last remark.
    details_->setTextCursor(QTextCursor(details_->document()->findBlockByNumber(firstNewBlock)));
    details_->ensureCursorVisible();
  }
}

// Each error in the list ("line 11: error: expected a ";"") and, when it is in this file, on its
// line in the editor.
void UserKernelPanel::showDiagnostics(const std::vector<KernelDiagnostic>& diagnostics) {
  diagnostics_->clear();
  editor_->clearDiagnostics();
  for (const KernelDiagnostic& diagnostic : diagnostics) {
    const QString message = QString::fromStdString(diagnostic.message);
    const QFileInfo where(QString::fromStdString(diagnostic.file));
    const bool inThisFile = where.fileName() == QFileInfo(file_).fileName();
    auto* item = new QListWidgetItem(diagnostics_);
    if (inThisFile && diagnostic.line > 0) {
      item->setText(tr("line %1: %2").arg(diagnostic.line).arg(message));
      item->setData(Qt::UserRole, diagnostic.line);
      editor_->addDiagnostic(diagnostic.line, message);
    } else {
      item->setText(diagnostic.line > 0 ? QString("%1:%2: %3").arg(where.fileName()).arg(diagnostic.line).arg(message)
                                        : QString("%1: %2").arg(where.fileName(), message));
    }
    item->setToolTip(item->text());
  }
}

QString UserKernelPanel::errorText() const {
  return error_->message();
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
