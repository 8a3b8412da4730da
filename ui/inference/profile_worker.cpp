#include "ui/inference/profile_worker.h"

#include <QThread>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/engine.h"
#include "app/core/util/error.h"
#include "ui/inference/device_use_coordinator.h"

namespace convscope::ui {

ProfileWorker::ProfileWorker(QObject* parent) : QObject(parent) {}

ProfileWorker::~ProfileWorker() {
  if (!thread_) return;
  cancel();
  thread_->wait();
  delete thread_;
}

void ProfileWorker::start(std::shared_ptr<const Model> model, const std::string& variant,
                          std::shared_ptr<const ImageSet> images, int batch) {
  if (thread_) return;
  result_.reset();
  error_.clear();
  cancelRequested_ = false;
  thread_ = QThread::create([this, model = std::move(model), variant, images = std::move(images), batch] {
    try {
      if (!findConvVariant(variant).runsOnGpu())
        throw Error("the profiler times GPU kernels; '" + variant + "' runs on the CPU");
      if (!images || images->count() == 0) throw Error("the profiler needs the test set, and none is loaded");
      const int count = std::min(batch, images->count());
      // The trace must see only this inference's kernels: no sweep or live inference in between.
      DeviceUseCoordinator::Lease lease(DeviceUseCoordinator::shared(), DeviceJob::Profile, &cancelRequested_);
      if (!lease.held()) throw Error("the profile was cancelled while it waited for the device");
      Engine engine(model, variant);
      const Tensor input = images->batch(0, count, model->inputHeight(), model->inputWidth());
      auto result = std::make_shared<ProfileResult>();
      result->variant = variant;
      result->modelName = model->name;
      result->deviceName = engine.deviceName();
      result->batch = count;
      result->rows = profileOneInference(engine, input);
      result_ = std::move(result);
    } catch (const std::exception& e) {
      error_ = QString::fromStdString(e.what());
    }
  });
  connect(thread_, &QThread::finished, this, &ProfileWorker::threadDone);
  thread_->start();
}

void ProfileWorker::cancel() {
  cancelRequested_ = true;
  DeviceUseCoordinator::shared().wakeWaiters();
}

void ProfileWorker::threadDone() {
  thread_->wait();
  thread_->deleteLater();
  thread_ = nullptr;
  if (!error_.isEmpty())
    emit failed(error_);
  else
    emit finished(result_);
}

}  // namespace convscope::ui
