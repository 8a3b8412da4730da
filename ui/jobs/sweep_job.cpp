#include "ui/jobs/sweep_job.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace convscope::ui {

namespace {

// Written next to its place and renamed over it: the file is always a whole report. A recovery
// file that cannot be written costs the safety net, not the sweep.
void writeRecoveryFile(const BenchmarkReport& report, const std::filesystem::path& path) {
  std::error_code ignored;
  std::filesystem::create_directories(path.parent_path(), ignored);
  const std::filesystem::path temporary = path.string() + ".partial";
  try {
    writeBenchmarkJson(report, temporary);
    std::filesystem::rename(temporary, path);
  } catch (const std::exception&) {
    std::filesystem::remove(temporary, ignored);
  }
}

}  // namespace

SweepJob::SweepJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

SweepJob::~SweepJob() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

void SweepJob::start(const BenchmarkOptions& options, std::shared_ptr<const ImageSet> images) {
  if (running() || !jobs_) return;
  cancelRequested_ = false;
  busyWith_.clear();
  // runBenchmark reports once before each (variant, batch) run's warm-up and once after every
  // timed repetition; counting those calls gives the progress bar its steps.
  const int steps = static_cast<int>(options.variants.size() * options.batches.size()) * (1 + options.repeats);
  JobRunner::Job job;
  job.kind = JobKind::Sweep;
  const std::filesystem::path recovery = recoveryFile_.toStdString();
  job.work = [this, options, images = std::move(images), steps,
              recovery](JobContext& context) -> std::function<void()> {
    int done = 0;
    const auto progress = [&](const std::string& message) {
      context.progress(std::min(99, 100 * done++ / std::max(1, steps)), QString::fromStdString(message));
      // One repetition per turn: the jobs waiting run now, between two of them.
      return context.yieldTurn();
    };
    // One (variant, batch) run at a time, in the order runBenchmark takes them, so that each one
    // reaches the recovery file the moment it is measured.
    auto report = std::make_shared<BenchmarkReport>();
    bool first = true;
    for (const std::string& variant : options.variants)
      for (const int batch : options.batches) {
        if (context.cancelled()) break;
        BenchmarkOptions one = options;
        one.variants = {variant};
        one.batches = {batch};
        BenchmarkReport part = runBenchmark(one, *images, progress);
        if (first) {
          *report = part;
          first = false;
        } else {
          report->runs.insert(report->runs.end(), part.runs.begin(), part.runs.end());
        }
        if (!part.runs.empty() && !recovery.empty()) writeRecoveryFile(*report, recovery);
      }
    QStringList others;
    for (const JobKind kind : context.othersInProgress()) others << QString::fromStdString(jobKindName(kind));
    const bool cancelled = context.cancelled();
    return [this, report, cancelled, others] { end(report, cancelled, others); };
  };
  job.progressed = [this](int percent, const QString& message) { emit progressed(percent, message); };
  job.failed = [this](const QString& message) {
    job_ = 0;
    emit failed(message);
  };
  job.dropped = [this] { end(nullptr, true, {}); };  // cancelled before its first turn: nothing measured
  job_ = jobs_->submit(this, std::move(job));
}

void SweepJob::cancel() {
  if (!running()) return;
  cancelRequested_ = true;
  if (jobs_) jobs_->cancel(job_);
}

void SweepJob::end(std::shared_ptr<const BenchmarkReport> report, bool cancelled, QStringList busyWith) {
  job_ = 0;
  busyWith_ = std::move(busyWith);
  cancelled = cancelled || cancelRequested_;
  emit progressed(100, cancelled ? tr("Cancelled") : tr("Done"));
  emit finished(std::move(report), cancelled);
}

}  // namespace convscope::ui
