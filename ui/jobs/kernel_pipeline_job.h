// A student's kernel through its three steps, each a job of the JobRunner: compile (NVRTC, in
// this process: compiling runs none of the student's code), then check and then time, each in a
// child process with a time limit (runUserKernelJob), so that a kernel that faults or never ends
// takes down that process, not the window. Each step's result arrives as a signal on the GUI
// thread; a step runs only when the one before it succeeded. start() again (the file was saved)
// cancels the steps in progress, killing a child that runs, and begins anew. The compiler is the
// core's (userKernelCompiler()): the one gpu/ installs in the program, which ui/ does not link.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <optional>

#include "app/core/conv/conv_failure_map.h"
#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/submitted_kernel.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

enum class KernelStep { Compile, Check, Time };

struct KernelStepResult {
  KernelStep step = KernelStep::Compile;
  bool ok = false;
  bool skipped = false;  // it could not run here (no GPU, no NVRTC): `summary` says why
  QString summary;       // one line
  QString details;       // compiler errors, the check's report, the child's last words
  // Compile: each error with its file and line (0: none), for the editor's marks.
  std::vector<KernelDiagnostic> diagnostics = {};  // a default: the other steps leave it out
  // Check, when it failed on wrong elements: the failing map, for the pictures (failure_pictures.h).
  std::optional<ConvFailureMap> failureMap = {};
};

class KernelPipelineJob : public QObject {
  Q_OBJECT

 public:
  explicit KernelPipelineJob(JobRunner* jobs, QObject* parent = nullptr);
  ~KernelPipelineJob() override;  // cancels the step in progress

  // The model and the test set the check's network run and the timing use; the program that runs
  // the kernel in a child process (convscope-cli; by default found next to this program).
  void setModelPath(const QString& path) { modelPath_ = path; }
  void setDataFolder(const QString& folder) { dataFolder_ = folder; }
  void setProgram(const QString& program) { program_ = program; }
  void setTimeLimits(double checkSeconds, double timingSeconds);
  void setTimingRepeats(int repeats, int warmups);

  void start(const QString& file);
  void cancel();
  bool running() const { return job_ != 0; }

  // convscope-cli beside this program (or in ../cli/, the build tree), or $CONVSCOPE_CLI.
  static QString defaultProgram();

 signals:
  void stepStarted(KernelStep step);
  void stepFinished(const KernelStepResult& result);
  // The kernel compiled. Its row joins the table (installUserKernel) only once its check passed,
  // on the worker thread before `checked`: the window never runs code that was not checked.
  void compiled(const QString& id, const QString& displayName);
  // The same compile, for the kernel's history (kernel_history.h): the source that compiled and its
  // SASS, or, when there is none (no nvdisasm; compiled to PTX only, without a GPU), why not.
  void sourceCompiled(const QString& source, const QString& sass, const QString& sassMissingReason);
  // `why`: empty when it passed, else why it may not be selected.
  void checked(const QString& id, bool passed, const QString& why);
  void timed(std::shared_ptr<const BenchmarkReport> report);

 private:
  void submitCompile();
  void submitCheck();
  void submitTime();
  void submit(KernelStep step, std::function<std::function<void()>(JobContext&)> work);

  QPointer<JobRunner> jobs_;  // the window may destroy the runner first
  // The last compile (read once, compiled in the sandbox): checked, timed and installed as it is.
  std::shared_ptr<const SubmittedKernel> compiled_;
  JobRunner::JobId job_ = 0;
  quint64 generation_ = 0;
  QString file_, id_;
  QString modelPath_, dataFolder_, program_;
  double checkSeconds_ = 120, timingSeconds_ = 600;
  int repeats_ = 10, warmups_ = 2;
};

}  // namespace convscope::ui
