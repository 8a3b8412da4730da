#include "ui/jobs/kernel_pipeline_job.h"

#include <QCoreApplication>
#include <QFileInfo>

#include "app/core/conv/kernel_resources.h"
#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/user_kernel_job.h"

namespace convscope::ui {

KernelPipelineJob::KernelPipelineJob(JobRunner* jobs, QObject* parent)
    : QObject(parent), jobs_(jobs), program_(defaultProgram()) {}

KernelPipelineJob::~KernelPipelineJob() {
  cancel();
}

QString KernelPipelineJob::defaultProgram() {
  if (const QString env = qEnvironmentVariable("CONVSCOPE_CLI"); !env.isEmpty()) return env;
  const QString dir = QCoreApplication::applicationDirPath();
  for (const QString& candidate : {dir + "/convscope-cli", dir + "/../cli/convscope-cli",
                                   dir + "/../app/cli/convscope-cli", dir + "/../../app/cli/convscope-cli"})
    if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
  return dir + "/convscope-cli";
}

void KernelPipelineJob::setTimeLimits(double checkSeconds, double timingSeconds) {
  checkSeconds_ = checkSeconds;
  timingSeconds_ = timingSeconds;
}

void KernelPipelineJob::setTimingRepeats(int repeats, int warmups) {
  repeats_ = repeats;
  warmups_ = warmups;
}

void KernelPipelineJob::start(const QString& file) {
  cancel();
  file_ = file;
  id_.clear();
  submitCompile();
}

void KernelPipelineJob::cancel() {
  ++generation_;  // results of the steps in flight are dropped when they arrive
  if (job_ && jobs_) jobs_->cancel(job_);
  job_ = 0;
}

void KernelPipelineJob::submit(KernelStep step, std::function<std::function<void()>(JobContext&)> work) {
  if (!jobs_) return;
  const quint64 generation = generation_;
  JobRunner::Job job;
  job.kind = JobKind::UserKernel;
  job.work = [this, generation, work = std::move(work)](JobContext& context) -> std::function<void()> {
    std::function<void()> done = work(context);
    return [this, generation, done] {
      if (generation != generation_) return;  // a newer save started over
      job_ = 0;
      done();
    };
  };
  job.failed = [this, step, generation](const QString& message) {
    if (generation != generation_) return;
    job_ = 0;
    emit stepFinished(KernelStepResult{step, false, false, tr("failed: %1").arg(message), message});
  };
  job.dropped = [this, generation] {
    if (generation == generation_) job_ = 0;
  };
  emit stepStarted(step);
  job_ = jobs_->submit(this, std::move(job));
}

void KernelPipelineJob::submitCompile() {
  const QString file = file_;
  const QString program = program_;
  submit(KernelStep::Compile, [this, file, program](JobContext& context) -> std::function<void()> {
    KernelStepResult result;
    result.step = KernelStep::Compile;
    QString id, name, sourceText, sass, sassMissingReason;
    std::shared_ptr<const SubmittedKernel> submitted;
    try {
      // Read once and compiled by the sandboxed compiler (submitted_kernel.h): a file opened from
      // a student is untrusted here too, and the check and the timing run this same module.
      SubmittedKernelOptions options;
      options.program = program.toStdString();
      submitted =
          submitKernel(file.toStdString(), file.toStdString(), options, [&context] { return !context.cancelled(); });
      const UserKernelSource& source = submitted->source;
      const CompiledUserKernel& kernel = submitted->compiled;
      result.ok = kernel.ok();
      if (kernel.ok()) {
        id = QString::fromStdString(source.id);
        name = QString::fromStdString(source.displayName);
        result.summary = tr("compiled for %1 · block %2×%3 · tile %4×%5")
                             .arg(QString::fromStdString(kernel.architecture))
                             .arg(source.launch.blockX)
                             .arg(source.launch.blockY)
                             .arg(source.launch.tileWidth)
                             .arg(source.launch.tileHeight);
        result.details = QString::fromStdString(kernel.log);
        sourceText = QString::fromStdString(source.text);
        // Here, off the window's thread: nvdisasm is a child process.
        if (kernel.architecture.rfind("sm_", 0) != 0 || kernel.image.empty()) {
          sassMissingReason =
              tr("compiled to %1 only (PTX, no GPU here), so no SASS").arg(QString::fromStdString(kernel.architecture));
        } else {
          try {
            sass = QString::fromStdString(disassembleCubin(kernel.image, file.toStdString()));
          } catch (const std::exception& e) {
            sassMissingReason = QString::fromUtf8(e.what());
          }
        }
      } else {
        // The first error where the student looks for it: "file.cu:10: error: expected a ";"".
        KernelDiagnostic first = kernel.errors.front();
        first.file = QFileInfo(QString::fromStdString(first.file)).fileName().toStdString();
        result.summary = tr("%n error(s); the first: %1", "", static_cast<int>(kernel.errors.size()))
                             .arg(QString::fromStdString(first.text()));
        result.details = QString::fromStdString(kernel.errorText());
        result.diagnostics = kernel.errors;
        if (!kernel.log.empty())
          result.details += tr("\nThe compiler's output:\n") + QString::fromStdString(kernel.log);
      }
    } catch (const std::exception& e) {
      result.summary = tr("cannot read it");
      result.details = QString::fromUtf8(e.what());
    }
    return [this, result, id, name, submitted, sourceText, sass, sassMissingReason] {
      emit stepFinished(result);
      if (!result.ok) return;
      emit sourceCompiled(sourceText, sass, sassMissingReason);
      id_ = id;
      compiled_ = submitted;
      emit compiled(id, name);
      submitCheck();
    };
  });
}

void KernelPipelineJob::submitCheck() {
  if (const GpuInfo& gpu = gpuInfo(); !gpu.usable) {
    const QString why = tr("cannot run the kernel here: %1").arg(QString::fromStdString(gpu.unusableReason));
    emit stepFinished(KernelStepResult{KernelStep::Check, false, true, why, why});
    emit stepFinished(KernelStepResult{KernelStep::Time, false, true, why, why});
    emit checked(id_, false, why);
    return;
  }
  UserKernelJob job;
  job.program = program_.toStdString();
  job.file = file_.toStdString();
  job.kernel = compiled_;
  job.model = modelPath_.toStdString();
  job.data = dataFolder_.toStdString();
  job.timeLimitSeconds = checkSeconds_;
  const std::shared_ptr<const SubmittedKernel> submitted = compiled_;
  submit(KernelStep::Check, [this, job, submitted](JobContext& context) -> std::function<void()> {
    context.progress(-1, tr("Checking your kernel"));
    const UserKernelJobResult r = runUserKernelJob(job, {}, [&context] { return !context.cancelled(); });
    KernelStepResult result;
    result.step = KernelStep::Check;
    result.ok = r.passed;
    // Checked in its own process: now its row may run here (selected in the window). On this
    // thread, so no live inference runs between the install and the end of this job.
    if (r.passed && submitted) {
      try {
        userKernelCompiler().install(submitted->compiled);
      } catch (const std::exception& e) {
        result.ok = false;
        result.summary = tr("passed, but cannot be added here: %1").arg(QString::fromUtf8(e.what()));
      }
    }
    if (result.ok) {
      result.summary = tr("passed %1 shapes").arg(r.shapesChecked);
      if (r.accuracy)
        result.summary += tr(" · test-set accuracy %1%").arg(*r.accuracy * 100, 0, 'f', 2) +
                          (r.courseAccuracy ? tr(" (course: %1%)").arg(*r.courseAccuracy * 100, 0, 'f', 2) : QString());
    } else if (r.passed) {
      // the install failed: summary set above
    } else if (r.firstWrong) {
      result.summary = tr("wrong at [n=%1][m=%2][h=%3][w=%4]: expected %5, got %6")
                           .arg(r.firstWrongN)
                           .arg(r.firstWrongM)
                           .arg(r.firstWrongH)
                           .arg(r.firstWrongW)
                           .arg(r.expected, 0, 'g', 7)
                           .arg(r.got, 0, 'g', 7);
    } else {
      result.summary = QString::fromStdString(r.failure);
    }
    result.details = QString::fromStdString(r.report);
    if (!r.passed) result.failureMap = r.failureMap;
    if (!r.passed && !r.childOutput.empty())
      result.details += tr("\nThe kernel's process said:\n") + QString::fromStdString(r.childOutput);
    return [this, result] {
      emit stepFinished(result);
      emit checked(id_, result.ok, result.ok ? QString() : tr("it did not pass the check"));
      if (result.ok) submitTime();
    };
  });
}

void KernelPipelineJob::submitTime() {
  UserKernelJob job;
  job.task = UserKernelJob::Task::Bench;
  job.program = program_.toStdString();
  job.file = file_.toStdString();
  job.kernel = compiled_;
  job.model = modelPath_.toStdString();
  job.data = dataFolder_.toStdString();
  job.repeats = repeats_;
  job.warmups = warmups_;
  job.timeLimitSeconds = timingSeconds_;
  submit(KernelStep::Time, [this, job](JobContext& context) -> std::function<void()> {
    context.progress(-1, tr("Timing your kernel"));
    const UserKernelJobResult r = runUserKernelJob(job, {}, [&context] { return !context.cancelled(); });
    KernelStepResult result;
    result.step = KernelStep::Time;
    result.ok = r.benchmark.has_value();
    std::shared_ptr<const BenchmarkReport> report;
    if (r.benchmark) {
      report = std::make_shared<BenchmarkReport>(*r.benchmark);
      QStringList times;
      for (const BenchmarkRun& run : r.benchmark->runs)
        times << tr("batch %1: %2 ms").arg(run.batch).arg(run.inference.median * 1e3, 0, 'f', 3);
      result.summary = times.join(" · ");
      result.details = tr("In the Timing tab beside the course's variants.");
    } else {
      result.summary = QString::fromStdString(r.failure);
      result.details = QString::fromStdString(r.report + r.childOutput);
    }
    return [this, result, report] {
      emit stepFinished(result);
      if (report) emit timed(report);
    };
  });
}

}  // namespace convscope::ui
