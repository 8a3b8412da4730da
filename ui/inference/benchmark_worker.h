// Runs a benchmark sweep (runBenchmark) on its own thread. Progress arrives as signals on the
// GUI thread; cancel() makes the next progress callback return false, so the core stops after
// the inference in flight and the runs measured so far are kept and shown. The sweep takes the
// device through the DeviceUseCoordinator, one repetition at a time; cancel() also ends a wait
// for the device's turn.
#pragma once

#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>

#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"

class QThread;

namespace convscope::ui {

class BenchmarkWorker : public QObject {
  Q_OBJECT

 public:
  explicit BenchmarkWorker(QObject* parent = nullptr);
  ~BenchmarkWorker() override;  // cancels a running sweep and waits for it

  bool running() const { return thread_ != nullptr; }
  void start(const BenchmarkOptions& options, std::shared_ptr<const ImageSet> images);
  void cancel();
  // Other device jobs ("live inference", "profile") that took turns with the last sweep.
  QStringList busyWith() const { return busyWith_; }

 signals:
  void progressed(int percent, const QString& message);
  // `cancelled`: the user stopped it; the report holds the runs that finished.
  void finished(std::shared_ptr<const BenchmarkReport> report, bool cancelled);
  void failed(const QString& message);

 private:
  void threadDone();

  QThread* thread_ = nullptr;
  std::atomic<bool> cancelRequested_{false};
  std::shared_ptr<BenchmarkReport> report_;
  QString error_;
  QStringList busyWith_;
};

}  // namespace convscope::ui
