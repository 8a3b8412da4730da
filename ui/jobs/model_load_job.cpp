#include "ui/jobs/model_load_job.h"

#include <QFileInfo>

#include "app/core/model/layer_titles.h"
#include "app/core/model/onnx_loader.h"

namespace convscope::ui {

ModelLoadJob::ModelLoadJob(JobRunner* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {}

ModelLoadJob::~ModelLoadJob() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

void ModelLoadJob::load(const QString& path) {
  if (!jobs_) return;
  if (job_) jobs_->cancel(job_);  // superseded
  const quint64 request = ++latest_;
  JobRunner::Job job;
  job.kind = JobKind::ModelLoad;
  job.work = [this, request, path](JobContext& context) -> std::function<void()> {
    context.progress(-1, tr("Loading the model %1…").arg(QFileInfo(path).fileName()));
    const std::shared_ptr<const Model> model = loadOnnxModel(path.toStdString());
    model->imageInput();  // the window needs a classifier of 1-channel pictures; say so now, not at inference
    model->layers();      // every node's shape for one image: the summary, the picker and the titles need them
    layerTitles(*model);
    std::optional<ModelCard> card = readModelCard(path.toStdString());
    return [this, request, path, model, card = std::move(card)] {
      if (request != latest_) return;
      job_ = 0;
      emit loaded(model, card, path);
    };
  };
  job.progressed = [this, request](int percent, const QString& message) {
    if (request == latest_) emit progressed(percent, message);
  };
  job.failed = [this, request, path](const QString& message) {
    if (request != latest_) return;
    job_ = 0;
    emit failed(path, message);
  };
  job_ = jobs_->submit(this, std::move(job));
}

}  // namespace convscope::ui
