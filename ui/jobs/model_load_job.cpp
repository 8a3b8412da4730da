#include "ui/jobs/model_load_job.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QPointer>
#include <QThreadPool>

#include <exception>

#include "app/core/model/layer_titles.h"
#include "app/core/model/onnx_loader.h"

namespace convscope::ui {

ModelLoadJob::ModelLoadJob(QObject* parent) : QObject(parent) {}

void ModelLoadJob::load(const QString& path) {
  const quint64 request = ++latest_;
  loading_ = true;
  emit progressed(-1, tr("Loading the model %1…").arg(QFileInfo(path).fileName()));
  // The answer is delivered on the GUI thread through the application object, which outlives any
  // window; the guard tells whether this loader still exists there.
  QThreadPool::globalInstance()->start([guard = QPointer<ModelLoadJob>(this), request, path] {
    std::shared_ptr<const Model> model;
    std::optional<ModelCard> card;
    QString error;
    try {
      model = loadOnnxModel(path.toStdString());
      model->imageInput();  // the window needs a classifier of pictures; say so now, not at inference
      model->layers();      // every node's shape for one image: the summary, the picker and the titles need them
      layerTitles(*model);
      card = readModelCard(path.toStdString());
      preprocessingFor(*model, card);  // a card whose rule does not fit the model is refused now
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
      if (error.isEmpty()) error = tr("the model could not be read");
    }
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [guard, request, path, model, card = std::move(card), error] {
          if (!guard || request != guard->latest_) return;  // gone, or superseded by a newer load
          guard->loading_ = false;
          if (error.isEmpty())
            emit guard->loaded(model, card, path);
          else
            emit guard->failed(path, error);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace convscope::ui
