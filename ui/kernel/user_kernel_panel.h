// The "Your kernel" tab: a student's .cu file (docs/your-kernel.md) and its three steps, compile,
// check and timing, each with its result. ConvScope watches the file: every save runs the steps
// again (KernelPipelineJob, on the job runner; the kernel itself runs in a child process, so a
// broken one never takes the window down).
#pragma once

#include <QString>
#include <QWidget>

#include <memory>

#include "app/core/engine/benchmark.h"
#include "ui/jobs/kernel_pipeline_job.h"

class QFileSystemWatcher;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTimer;

namespace convscope::ui {

class JobRunner;

class UserKernelPanel : public QWidget {
  Q_OBJECT

 public:
  explicit UserKernelPanel(JobRunner* jobs, QWidget* parent = nullptr);

  // Watches `file` and runs its steps now and after every save.
  void openKernel(const QString& file);
  void openFileDialog();
  QString file() const { return file_; }
  KernelPipelineJob* pipeline() const { return pipeline_; }

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
  void showStarted(KernelStep step);
  void showFinished(const KernelStepResult& result);
  QLabel*& statusOf(KernelStep step);

  KernelPipelineJob* pipeline_;
  QFileSystemWatcher* watcher_;
  QTimer* saveSettle_;  // editors save in bursts (write, rename): one run per save
  QLabel* fileLabel_;
  QLabel* compile_;
  QLabel* check_;
  QLabel* time_;
  QPlainTextEdit* details_;
  QPushButton* rerun_;
  QString file_, id_, name_;
};

}  // namespace convscope::ui
