// A benchmark sweep (runBenchmark) as a job of the JobRunner. It takes turns: after every timed
// repetition it gives the device to the jobs waiting (a live inference, a load), so the
// prediction follows the pen during a long sweep. Progress arrives as signals on the GUI thread;
// cancel() stops it after the repetition in flight, and the runs measured so far are kept. With
// a recovery file, every (variant, batch) run is written there as soon as it is measured (a
// temporary file renamed over it), so a crash or a kill mid-sweep loses at most the run in flight.
#pragma once

#include <QObject>
#include <QPointer>
#include <QStringList>

#include <memory>

#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

class SweepJob : public QObject {
  Q_OBJECT

 public:
  explicit SweepJob(JobRunner* jobs, QObject* parent = nullptr);
  ~SweepJob() override;  // cancels a sweep in progress

  bool running() const { return job_ != 0; }
  void start(const BenchmarkOptions& options, std::shared_ptr<const ImageSet> images);
  // Where each finished run goes while the sweep runs; empty: nowhere.
  void setRecoveryFile(const QString& path) { recoveryFile_ = path; }
  void cancel();
  // Other jobs ("live inference", "profile", …) that took turns with the last sweep.
  QStringList busyWith() const { return busyWith_; }

 signals:
  void progressed(int percent, const QString& message);
  // `cancelled`: the user stopped it; the report holds the runs that finished (null: none).
  void finished(std::shared_ptr<const BenchmarkReport> report, bool cancelled);
  void failed(const QString& message);

 private:
  void end(std::shared_ptr<const BenchmarkReport> report, bool cancelled, QStringList busyWith);

  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;
  bool cancelRequested_ = false;
  QStringList busyWith_;
  QString recoveryFile_;
};

}  // namespace convscope::ui
