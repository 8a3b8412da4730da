#include "ui/inference/benchmark_worker.h"

#include <QThread>

#include <algorithm>

#include "ui/inference/device_use_coordinator.h"

namespace convscope::ui {

BenchmarkWorker::BenchmarkWorker(QObject* parent) : QObject(parent) {}

BenchmarkWorker::~BenchmarkWorker() {
  if (!thread_) return;
  cancel();
  thread_->wait();
  delete thread_;
}

void BenchmarkWorker::start(const BenchmarkOptions& options, std::shared_ptr<const ImageSet> images) {
  if (thread_) return;
  cancelRequested_ = false;
  report_.reset();
  error_.clear();
  busyWith_.clear();
  // runBenchmark reports once before each (variant, batch) run's warm-up and once after every
  // timed repetition; counting those calls gives the progress bar its steps.
  const int steps = static_cast<int>(options.variants.size() * options.batches.size()) * (1 + options.repeats);
  thread_ = QThread::create([this, options, images = std::move(images), steps] {
    int done = 0;
    try {
      // The sweep holds the device for one repetition at a time: between two, the live inference
      // may take a turn, so the prediction follows the user and neither timing is disturbed.
      DeviceUseCoordinator::Lease lease(DeviceUseCoordinator::shared(), DeviceJob::Sweep, &cancelRequested_);
      if (!lease.held()) return;  // cancelled while waiting for the first turn: nothing measured
      auto report = std::make_shared<BenchmarkReport>(runBenchmark(options, *images, [&](const std::string& message) {
        const int percent = std::min(99, 100 * done++ / std::max(1, steps));
        QMetaObject::invokeMethod(
            this, [this, percent, text = QString::fromStdString(message)] { emit progressed(percent, text); },
            Qt::QueuedConnection);
        return lease.yieldTurn() && !cancelRequested_.load();
      }));
      report_ = std::move(report);
      for (const DeviceJob job : lease.othersInProgress()) busyWith_ << QString::fromStdString(deviceJobName(job));
    } catch (const std::exception& e) {
      error_ = QString::fromStdString(e.what());
    }
  });
  connect(thread_, &QThread::finished, this, &BenchmarkWorker::threadDone);
  thread_->start();
}

void BenchmarkWorker::cancel() {
  cancelRequested_ = true;
  DeviceUseCoordinator::shared().wakeWaiters();  // a sweep waiting for its turn stops waiting
}

void BenchmarkWorker::threadDone() {
  thread_->wait();
  thread_->deleteLater();
  thread_ = nullptr;
  if (!error_.isEmpty()) {
    emit failed(error_);
    return;
  }
  emit progressed(100, cancelRequested_ ? tr("Cancelled") : tr("Done"));
  emit finished(report_, cancelRequested_.load());
}

}  // namespace convscope::ui
