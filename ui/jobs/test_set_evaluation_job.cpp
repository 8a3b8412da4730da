#include "ui/jobs/test_set_evaluation_job.h"

#include <QMetaObject>

#include <algorithm>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/engine.h"
#include "app/core/util/error.h"

namespace convscope::ui {

std::string classifyingVariant(const std::string& selected) {
  const std::string fastest = defaultConvVariant();
  const auto& course = convVariants();
  const auto isCourseRow = [&](const std::string& id) {
    return std::any_of(course.begin(), course.end(), [&](const ConvVariant& v) { return v.id == id; });
  };
  if (!isCourseRow(selected) || !isCourseRow(fastest)) return selected;  // a student's kernel: itself
  const ConvVariant& chosen = findConvVariant(selected);
  const ConvVariant& quick = findConvVariant(fastest);
  return chosen.arithmetic == "FP32" && quick.arithmetic == "FP32" ? fastest : selected;
}

TestSetEvaluationJob::TestSetEvaluationJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

TestSetEvaluationJob::~TestSetEvaluationJob() {
  cancel();
}

void TestSetEvaluationJob::start(std::shared_ptr<const Model> model, const std::string& variant,
                                 std::shared_ptr<const ImageSet> images, std::optional<Preprocessing> preprocessing) {
  if (!jobs_) return;
  cancel();
  JobRunner::Job job;
  job.kind = JobKind::TestSetEvaluation;
  // A superseded evaluation's ending must not touch the newer one's state.
  const quint64 generation = ++latest_;
  job.work = [this, model = std::move(model), variant, images = std::move(images), preprocessing,
              generation](JobContext& context) -> std::function<void()> {
    if (!model) throw Error("no model is loaded");
    if (!images || images->count() == 0) throw Error("the confusion matrix needs the test set, and none is loaded");
    auto evaluation = std::make_shared<TestSetEvaluation>();
    const std::string classifiedWith = classifyingVariant(variant);
    Engine engine(model, classifiedWith);
    if (preprocessing) engine.setPreprocessing(*preprocessing);
    evaluation->model = model;
    evaluation->variant = variant;
    evaluation->classifiedWith = classifiedWith;
    evaluation->deviceName = engine.deviceName();
    evaluation->images = images;
    const int total = images->count();
    context.progress(0,
                     tr("Classifying %1 test images with %2…").arg(total).arg(QString::fromStdString(classifiedWith)));
    // Chunks of a tenth of the set: the matrix so far goes to the view after each one.
    const int step = std::max(256, (total + 9) / 10);
    ClassificationRun& run = evaluation->run;
    for (int first = 0; first < total && !run.cancelled; first += step) {
      ClassificationRun part = classify(engine, *images, first, std::min(step, total - first), 256, [&](int done, int) {
        context.progress(static_cast<int>(100LL * (first + done) / total),
                         tr("Classified %1 of %2 test images with %3")
                             .arg(first + done)
                             .arg(total)
                             .arg(QString::fromStdString(classifiedWith)));
        return !context.cancelled();
      });
      run.images.insert(run.images.end(), std::make_move_iterator(part.images.begin()),
                        std::make_move_iterator(part.images.end()));
      if (run.convTimes.empty())
        run.convTimes = part.convTimes;
      else
        for (size_t l = 0; l < run.convTimes.size() && l < part.convTimes.size(); ++l)
          run.convTimes[l].seconds += part.convTimes[l].seconds;
      run.correct += part.correct;
      run.labelled += part.labelled;
      run.seconds += part.seconds;
      run.cancelled = part.cancelled;
      if (!run.cancelled && first + step < total) {
        auto soFar = std::make_shared<TestSetEvaluation>(*evaluation);
        QMetaObject::invokeMethod(
            this,
            [this, soFar, generation] {
              if (generation == latest_) emit partial(soFar);
            },
            Qt::QueuedConnection);
      }
    }
    evaluation->complete = !run.cancelled;
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
