// Why a student's kernel is slow, computed off the GUI thread: after a successful compile the
// Your kernel tab asks this job for the kernel's resources and occupancy (the same figures as
// `convscope-cli kernel info`), its PTX and SASS (`kernel ptx`, `kernel sass`) and, for each
// listing, the source line every listing line came from (-lineinfo), so that the PTX/SASS pane
// can follow the editor's cursor without asking again. The work is a job of the JobRunner (a
// compile and an nvdisasm run take seconds); the compiler is the core's (user_kernel_compiler.h).
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <vector>

#include "app/core/conv/user_kernel_compiler.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

struct KernelInspectionResult {
  QString file;
  // Why there are no figures (the file no longer compiles, no compiler here); empty when there are.
  QString problem;
  UserKernelInspection inspection;
  QString ptx;
  std::vector<int> ptxSourceLines;  // sourceLinesOfListing of the PTX
  QString sass;                     // empty when nvdisasm is missing or failed: `sassProblem` says why
  std::vector<int> sassSourceLines;
  QString sassProblem;
  bool ok() const { return problem.isEmpty(); }
};

// Everything above for `file`, compiled for `architecture` (empty: the GPU here, else sm_90).
// Never throws: what goes wrong is said in `problem` or `sassProblem`.
KernelInspectionResult inspectKernelFile(const QString& file, const std::string& architecture = {});

class KernelInspectionJob : public QObject {
  Q_OBJECT

 public:
  explicit KernelInspectionJob(JobRunner* jobs, QObject* parent = nullptr);
  ~KernelInspectionJob() override;  // cancels the inspection in progress

  // Inspects `file` (a newer start replaces an inspection not yet finished).
  void start(const QString& file);
  void cancel();
  bool running() const { return job_ != 0; }

 signals:
  void started(const QString& file);
  void inspected(std::shared_ptr<const KernelInspectionResult> result);

 private:
  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;
  quint64 generation_ = 0;
};

}  // namespace convscope::ui
