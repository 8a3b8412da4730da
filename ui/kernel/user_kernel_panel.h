// The "Your kernel" tab: a student's .cu file in an editor (KernelEditor) and its three steps,
// compile, check and timing, each with its result. Saving (Ctrl+S) writes the file and runs the
// steps (KernelPipelineJob, on the job runner; the kernel itself runs in a child process, so a
// broken one never takes the window down); each compile error is marked on its line and listed.
// The file on disk stays the source of truth: ConvScope watches it, so a save from another editor
// reloads this one (or, over unsaved edits here, asks which to keep) and runs the steps again.
// No edit is lost: opening another file or closing the window with unsaved edits asks first.
#pragma once

#include <QString>
#include <QWidget>

#include <functional>
#include <memory>

#include "app/core/engine/benchmark.h"
#include "ui/jobs/kernel_pipeline_job.h"

class QFileSystemWatcher;
class QLabel;
class QTabWidget;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QTimer;

namespace convscope::ui {

class ErrorBanner;
class FailurePictures;
class JobRunner;
class KernelEditor;
class KernelHistoryView;
class KernelInspectionJob;
class KernelListingPane;
class KernelResourcesView;

enum class KernelTemplate { Naive, Tiled };  // examples/kernels/naive_conv.cu, tiled_conv.cu

class UserKernelPanel : public QWidget {
  Q_OBJECT

 public:
  // The questions the panel asks, replaceable (tests answer them without a dialog).
  // Where to save a new kernel; empty: cancelled. `suggested` is a path to start from.
  using SavePathChooser = std::function<QString(const QString& suggested)>;
  // The file changed on disk while the editor holds unsaved edits: true keeps the editor's text.
  using DiskConflictResolver = std::function<bool(const QString& file)>;
  enum class UnsavedEditsChoice { Save, Discard, Cancel };
  using UnsavedEditsPrompt = std::function<UnsavedEditsChoice(const QString& file)>;

  explicit UserKernelPanel(JobRunner* jobs, QWidget* parent = nullptr);

  // Shows `file` in the editor, watches it, and runs its steps now and after every save.
  void openKernel(const QString& file);
  void openFileDialog();
  // Asks where to save a copy of the template, writes it and opens it. False: cancelled or failed.
  bool newFromTemplate(KernelTemplate which);
  // Writes the editor's text to the file and runs the steps. False (and says why) when it could not.
  bool save();
  // Before the window closes: with unsaved edits, asks Save / Discard / Cancel. False: stay open.
  bool confirmClose();

  QString file() const { return file_; }
  KernelPipelineJob* pipeline() const { return pipeline_; }
  KernelEditor* editor() const { return editor_; }
  QListWidget* diagnosticsList() const { return diagnostics_; }
  // Where a failed check's kernel is wrong, as pictures; hidden unless the last check kept a map.
  FailurePictures* failurePictures() const { return failurePictures_; }
  // Every version of the open kernel that compiled: the op-time chart, the list and the diffs.
  KernelHistoryView* historyView() const { return history_; }
  QString errorText() const;  // the panel's error strip, empty while hidden
  // Why it is slow: the figures of `kernel info`, and the PTX/SASS of the line under the cursor,
  // from an inspection (KernelInspectionJob) after every successful compile.
  KernelInspectionJob* inspection() const { return inspection_; }
  KernelResourcesView* resourcesView() const { return resources_; }
  KernelListingPane* listingPane() const { return listing_; }
  // Steps, History and PTX / SASS: the tabs beside the editor.
  QTabWidget* sideTabs() const { return sideTabs_; }

  void setSavePathChooser(SavePathChooser chooser) { chooseSavePath_ = std::move(chooser); }
  void setDiskConflictResolver(DiskConflictResolver resolver) { keepEditorOverDisk_ = std::move(resolver); }
  void setUnsavedEditsPrompt(UnsavedEditsPrompt prompt) { askAboutUnsavedEdits_ = std::move(prompt); }

  // A template's text, as built into the program.
  static QString templateSource(KernelTemplate which);

  // What a step's row shows: "Compile: compiled for sm_90 · block 16×16 · tile 16×16".
  QString stepText(KernelStep step) const;
  QString detailsText() const;
  QString exportTo(const QString& path);

 signals:
  // For the variant selector: the kernel's row, selectable when `unavailableReason` is empty.
  void variantReady(const QString& id, const QString& displayName, const QString& unavailableReason);
  void timed(std::shared_ptr<const BenchmarkReport> report);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void useMonospaceFont();
  void run();
  void reactToDiskChange();
  bool askBeforeLeavingUnsavedEdits();  // false: the user cancelled, or the save failed
  void showFileState();
  void showStarted(KernelStep step);
  void showFinished(const KernelStepResult& result);
  void showDiagnostics(const std::vector<KernelDiagnostic>& diagnostics);
  void followWhySlowViews();  // the inspection after each compile; the listing follows the cursor
  QLabel*& statusOf(KernelStep step);

  KernelPipelineJob* pipeline_;
  QFileSystemWatcher* watcher_;
  QTimer* saveSettle_;  // editors save in bursts (write, rename): one run per save
  ErrorBanner* error_;
  QLabel* fileLabel_;
  KernelEditor* editor_;
  QPushButton* save_;
  QLabel* compile_;
  QLabel* check_;
  QLabel* time_;
  FailurePictures* failurePictures_;
  KernelHistoryView* history_;
  QListWidget* diagnostics_;
  QPlainTextEdit* details_;
  QPushButton* rerun_;
  KernelInspectionJob* inspection_;
  KernelResourcesView* resources_;
  KernelListingPane* listing_;
  QTabWidget* sideTabs_ = nullptr;
  QString file_, id_, name_;
  QString diskText_;  // what the file held when this panel last read or wrote it
  SavePathChooser chooseSavePath_;
  DiskConflictResolver keepEditorOverDisk_;
  UnsavedEditsPrompt askAboutUnsavedEdits_;
};

}  // namespace convscope::ui
