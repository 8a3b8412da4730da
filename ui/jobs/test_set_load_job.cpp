#include "ui/jobs/test_set_load_job.h"

#include <QDir>

namespace convscope::ui {

TestSetLoadJob::TestSetLoadJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

TestSetLoadJob::~TestSetLoadJob() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

void TestSetLoadJob::load(const QString& folder) {
  if (!jobs_) return;
  if (job_) jobs_->cancel(job_);  // superseded
  const quint64 request = ++latest_;
  JobRunner::Job job;
  job.kind = JobKind::TestSetLoad;
  job.work = [this, request, folder](JobContext& context) -> std::function<void()> {
    context.progress(-1, tr("Loading the test set from %1…").arg(QDir::toNativeSeparators(folder)));
    auto images = std::make_shared<const ImageSet>(ImageSet::loadIdxFolder(folder.toStdString()));
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
