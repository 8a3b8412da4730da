#include "ui/jobs/kernel_inspection_job.h"

#include <QFileInfo>

#include "app/core/conv/kernel_resources.h"
#include "app/core/conv/user_kernel_source.h"

namespace convscope::ui {

KernelInspectionResult inspectKernelFile(const QString& file, const std::string& architecture) {
  KernelInspectionResult result;
  result.file = file;
  try {
    const UserKernelSource source = readUserKernelSource(file.toStdString());
    result.inspection = userKernelCompiler().inspect(source, architecture);
    const CompiledUserKernel& kernel = result.inspection.kernel;
    if (!kernel.ok()) {
      result.problem =
          QObject::tr("%1 does not compile for %2: %3")
              .arg(QFileInfo(file).fileName(),
                   QString::fromStdString(kernel.architecture.empty() ? architecture : kernel.architecture),
                   QString::fromStdString(kernel.errors.front().text()));
      return result;
    }
    result.ptx = QString::fromStdString(kernel.ptx);
    result.ptxSourceLines = sourceLinesOfListing(kernel.ptx, ListingKind::Ptx, source.path.string());
    if (!findNvdisasm()) {
      result.sassProblem = QString::fromStdString(nvdisasmMissingMessage(source.path.string()));
      return result;
    }
    const std::string sass = disassembleCubin(kernel.image, source.path.string());
    result.sass = QString::fromStdString(sass);
    result.sassSourceLines = sourceLinesOfListing(sass, ListingKind::Sass, source.path.string());
  } catch (const std::exception& e) {
    // readUserKernelSource and disassembleCubin name the file in their messages.
    (result.ptx.isEmpty() ? result.problem : result.sassProblem) = QString::fromUtf8(e.what());
  }
  return result;
}

KernelInspectionJob::KernelInspectionJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

KernelInspectionJob::~KernelInspectionJob() {
  cancel();
}

void KernelInspectionJob::cancel() {
  ++generation_;  // a result still in flight is dropped when it arrives
  if (job_ && jobs_) jobs_->cancel(job_);
  job_ = 0;
}

void KernelInspectionJob::start(const QString& file) {
  cancel();
  if (!jobs_) return;
  const quint64 generation = generation_;
  JobRunner::Job job;
  job.kind = JobKind::UserKernel;
  job.work = [this, generation, file](JobContext&) -> std::function<void()> {
    auto result = std::make_shared<const KernelInspectionResult>(inspectKernelFile(file));
    return [this, generation, result] {
      if (generation != generation_) return;  // a newer compile asked again
      job_ = 0;
      emit inspected(result);
    };
  };
  job.failed = [this, generation, file](const QString& message) {
    if (generation != generation_) return;
    job_ = 0;
    auto result = std::make_shared<KernelInspectionResult>();
    result->file = file;
    result->problem = message;
    emit inspected(result);
  };
  job.dropped = [this, generation] {
    if (generation == generation_) job_ = 0;
  };
  emit started(file);
  job_ = jobs_->submit(this, std::move(job));
}

}  // namespace convscope::ui
