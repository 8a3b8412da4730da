// Loads an ONNX model as a job of the JobRunner, off the GUI thread, and checks there everything
// the window will ask of it (a classifier of one-channel pictures, every layer's shape, the layer
// titles), so that nothing about the model can fail later on the GUI thread. A later load
// supersedes an earlier one: a waiting one is dropped, a running one's result is ignored.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <optional>

#include "app/core/model/model.h"
#include "app/core/model/model_card.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

class ModelLoadJob : public QObject {
  Q_OBJECT

 public:
  explicit ModelLoadJob(JobRunner* jobs, QObject* parent = nullptr);
  ~ModelLoadJob() override;  // drops a load still waiting

  void load(const QString& path);
  bool loading() const { return job_ != 0; }

 signals:
  void progressed(int percent, const QString& message);
  void loaded(std::shared_ptr<const convscope::Model> model, std::optional<convscope::ModelCard> card,
              const QString& path);
  void failed(const QString& path, const QString& message);

 private:
  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;
  quint64 latest_ = 0;
};

}  // namespace convscope::ui
