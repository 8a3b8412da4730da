#include "ui/jobs/test_set_evaluation_job.h"

#include "app/core/engine/engine.h"
#include "app/core/util/error.h"

namespace convscope::ui {

TestSetEvaluationJob::TestSetEvaluationJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

TestSetEvaluationJob::~TestSetEvaluationJob() {
  cancel();
}

void TestSetEvaluationJob::start(std::shared_ptr<const Model> model, const std::string& variant,
                                 std::shared_ptr<const ImageSet> images) {
  if (!jobs_) return;
  cancel();
  JobRunner::Job job;
  job.kind = JobKind::TestSetEvaluation;
  // A superseded evaluation's ending must not touch the newer one's state.
  const quint64 generation = ++latest_;
  job.work = [this, model = std::move(model), variant, images = std::move(images),
              generation](JobContext& context) -> std::function<void()> {
    if (!model) throw Error("no model is loaded");
    if (!images || images->count() == 0) throw Error("the confusion matrix needs the test set, and none is loaded");
    auto evaluation = std::make_shared<TestSetEvaluation>();
    Engine engine(model, variant);
    evaluation->model = model;
    evaluation->variant = variant;
    evaluation->deviceName = engine.deviceName();
    evaluation->images = images;
    context.progress(
        0, tr("Classifying %1 test images with %2…").arg(images->count()).arg(QString::fromStdString(variant)));
    evaluation->run = classify(engine, *images, 0, images->count(), 256, [&](int done, int total) {
      context.progress(static_cast<int>(100LL * done / total),
                       tr("Classified %1 of %2 test images").arg(done).arg(total));
      return !context.cancelled();
    });
    const bool stopped = evaluation->run.cancelled;
    return [this, evaluation, stopped, generation] {
      if (generation != latest_) return;
      job_ = 0;
      if (stopped)
        emit cancelled();
      else
        emit finished(evaluation);
    };
  };
  job.failed = [this, generation](const QString& message) {
    if (generation != latest_) return;
    job_ = 0;
    emit failed(message);
  };
  job.dropped = [this, generation] {
    if (generation != latest_) return;
    job_ = 0;
    emit cancelled();
  };
  job.progressed = [this, generation](int percent, const QString& message) {
    if (generation == latest_) emit progressed(percent, message);
  };
  job_ = jobs_->submit(this, std::move(job));
}

void TestSetEvaluationJob::cancel() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

}  // namespace convscope::ui
