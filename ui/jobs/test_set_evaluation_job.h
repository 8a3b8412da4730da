// Classifies the whole test set with the current model as a job of the JobRunner, for the confusion
// matrix: the same classify() the CLI's classify command runs, in chunks, reporting progress and
// the matrix so far after each chunk (the view fills in as it goes) and stopping at the next chunk
// when cancelled. A course variant with exact FP32 products is classified with the fastest such
// variant here (classifyingVariant): the classes are the same function, found in seconds rather
// than the CPU reference's minute; a variant of other arithmetic (TF32) or a student's kernel is
// classified with itself, since its mistakes are the question.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <optional>
#include <string>

#include "app/core/data/image_set.h"
#include "app/core/data/preprocessing.h"
#include "app/core/engine/classifier.h"
#include "app/core/model/model.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

struct TestSetEvaluation {
  std::shared_ptr<const Model> model;
  std::string variant;         // the variant the matrix is for: the one selected
  std::string classifiedWith;  // the variant that computed it (see classifyingVariant)
  bool complete = false;       // false for the matrix so far, while the job runs
  std::string deviceName;
  std::shared_ptr<const ImageSet> images;
  ClassificationRun run;
};

// The variant that classifies the test set for `selected`: the fastest available course variant of
// the same exact FP32 arithmetic where `selected` is one, else `selected` itself.
std::string classifyingVariant(const std::string& selected);

class TestSetEvaluationJob : public QObject {
  Q_OBJECT

 public:
  explicit TestSetEvaluationJob(JobRunner* jobs, QObject* parent = nullptr);
  ~TestSetEvaluationJob() override;  // cancels an evaluation still waiting or running

  // A later start supersedes (cancels) an evaluation still in progress.
  // `preprocessing`: how the pictures reach the model (the window's rule); none: the engine's default.
  void start(std::shared_ptr<const Model> model, const std::string& variant, std::shared_ptr<const ImageSet> images,
             std::optional<Preprocessing> preprocessing = std::nullopt);
  void cancel();
  bool running() const { return job_ != 0; }

 signals:
  void progressed(int percent, const QString& message);
  // The images classified so far (complete = false), after each chunk.
  void partial(std::shared_ptr<const convscope::ui::TestSetEvaluation> evaluation);
  void finished(std::shared_ptr<const convscope::ui::TestSetEvaluation> evaluation);
  void failed(const QString& message);
  void cancelled();

 private:
  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;
  quint64 latest_ = 0;
};

}  // namespace convscope::ui
