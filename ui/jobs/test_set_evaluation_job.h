// Classifies the whole test set with the current model and variant as a job of the JobRunner, for
// the confusion matrix: the same classify() the CLI's classify command runs, in chunks, reporting
// progress after each chunk and stopping at the next chunk when cancelled.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <string>

#include "app/core/data/image_set.h"
#include "app/core/engine/classifier.h"
#include "app/core/model/model.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

struct TestSetEvaluation {
  std::shared_ptr<const Model> model;
  std::string variant;
  std::string deviceName;
  std::shared_ptr<const ImageSet> images;
  ClassificationRun run;
};

class TestSetEvaluationJob : public QObject {
  Q_OBJECT

 public:
  explicit TestSetEvaluationJob(JobRunner* jobs, QObject* parent = nullptr);
  ~TestSetEvaluationJob() override;  // cancels an evaluation still waiting or running

  // A later start supersedes (cancels) an evaluation still in progress.
  void start(std::shared_ptr<const Model> model, const std::string& variant, std::shared_ptr<const ImageSet> images);
  void cancel();
  bool running() const { return job_ != 0; }

 signals:
  void progressed(int percent, const QString& message);
  void finished(std::shared_ptr<const convscope::ui::TestSetEvaluation> evaluation);
  void failed(const QString& message);
  void cancelled();

 private:
  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;
  quint64 latest_ = 0;
};

}  // namespace convscope::ui
