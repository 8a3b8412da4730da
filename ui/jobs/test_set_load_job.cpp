#include "ui/jobs/test_set_load_job.h"

#include <QDir>

#include <algorithm>
#include <filesystem>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/picture_input.h"
#include "app/core/util/error.h"

namespace convscope::ui {

TestSetLoadJob::TestSetLoadJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

TestSetLoadJob::~TestSetLoadJob() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

void TestSetLoadJob::load(const QString& folder, std::shared_ptr<const Model> model, const Preprocessing& preprocessing,
                          const std::vector<std::string>& classNames) {
  if (!jobs_) return;
  if (job_) jobs_->cancel(job_);  // superseded
  const quint64 request = ++latest_;
  JobRunner::Job job;
  job.kind = JobKind::TestSetLoad;
  job.work = [this, request, folder, model, preprocessing, classNames](JobContext& context) -> std::function<void()> {
    context.progress(-1, tr("Loading the test set from %1…").arg(QDir::toNativeSeparators(folder)));
    const std::filesystem::path path = folder.toStdString();
    std::shared_ptr<const ImageSet> images;
    if (isImageFolder(path)) {
      if (!model)
        throw Error(path.string() + ": photos in class subfolders are read as a model sees them; open a model first");
      // Only the engine's model and preprocessing are used: a CPU row's engine makes no device.
      const std::vector<ConvVariant>& rows = convVariants();
      const auto cpu = std::find_if(rows.begin(), rows.end(), [](const ConvVariant& v) { return !v.runsOnGpu(); });
      Engine engine(model, cpu->id);
      engine.setPreprocessing(preprocessing);
      images = std::make_shared<const ImageSet>(loadImageFolder(engine, path, classNames));
    } else {
      images = std::make_shared<const ImageSet>(ImageSet::loadIdxFolder(path));
    }
    return [this, request, images] {
      if (request != latest_) return;
      job_ = 0;
      emit loaded(images);
    };
  };
  job.progressed = [this, request](int percent, const QString& message) {
    if (request == latest_) emit progressed(percent, message);
  };
  job.failed = [this, request, folder](const QString& message) {
    if (request != latest_) return;
    job_ = 0;
    emit failed(folder, message);
  };
  job_ = jobs_->submit(this, std::move(job));
}

}  // namespace convscope::ui
