#include "ui/jobs/profile_job.h"

#include <algorithm>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/engine.h"
#include "app/core/util/error.h"

namespace convscope::ui {

ProfileJob::ProfileJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

ProfileJob::~ProfileJob() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

void ProfileJob::start(std::shared_ptr<const Model> model, const std::string& variant,
                       std::shared_ptr<const ImageSet> images, int batch) {
  if (running() || !jobs_) return;
  JobRunner::Job job;
  job.kind = JobKind::Profile;
  job.work = [this, model = std::move(model), variant, images = std::move(images),
              batch](JobContext&) -> std::function<void()> {
    if (!findConvVariant(variant).runsOnGpu())
      throw Error("the profiler times GPU kernels; '" + variant + "' runs on the CPU");
    if (!images || images->count() == 0) throw Error("the profiler needs the test set, and none is loaded");
    const int count = std::min(batch, images->count());
    Engine engine(model, variant);
    engine.checkMemory(count);  // before the batch itself is built
    const Tensor input = images->batch(0, count, model->inputHeight(), model->inputWidth());
    auto result = std::make_shared<ProfileResult>();
    result->variant = variant;
    result->modelName = model->name;
    result->deviceName = engine.deviceName();
    result->batch = count;
    result->rows = profileOneInference(engine, input);
    return [this, result] {
      job_ = 0;
      emit finished(result);
    };
  };
  job.failed = [this](const QString& message) {
    job_ = 0;
    emit failed(message);
  };
  job.dropped = [this] {
    job_ = 0;
    emit failed(tr("the profile was cancelled while it waited for the device"));
  };
  job_ = jobs_->submit(this, std::move(job));
}

void ProfileJob::cancel() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

}  // namespace convscope::ui
