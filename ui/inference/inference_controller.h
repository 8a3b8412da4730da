// Live inference: runs the engine for the picture on screen as jobs of the JobRunner, off the GUI
// thread. Requests are coalesced: while one inference runs, a newer request replaces any that is
// still waiting, so a pen moving over the drawing canvas never builds a backlog and the latest
// picture is always the next one done. The engine is kept between pictures and rebuilt on the
// runner's thread when the model or the kernel variant changes. Each picture is run once with
// every layer captured, then timed over several warm runs (the op time shown is their median);
// the runner runs one job at a time, so a sweep or a profile never computes meanwhile.
#pragma once

#include <QObject>
#include <QPointer>

#include <memory>
#include <optional>
#include <string>

#include "app/core/data/image_set.h"
#include "app/core/data/preprocessing.h"
#include "app/core/model/model.h"
#include "ui/inference/inference_outcome.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

struct LiveEngine;

class InferenceController : public QObject {
  Q_OBJECT

 public:
  // Warm runs timed per picture; fewer when a newer picture is already waiting (the pen moves).
  static constexpr int kTimedRuns = 5;

  explicit InferenceController(JobRunner* jobs, QObject* parent = nullptr);
  ~InferenceController() override;  // cancels its job

  // Later requests use this model / variant; the last input is classified again with it. The
  // model's pictures are brought to its input by `preprocessing` (its card's rule, or the
  // default for its input channels when none is given).
  void setModel(std::shared_ptr<const Model> model);
  void setModel(std::shared_ptr<const Model> model, const Preprocessing& preprocessing);
  const Preprocessing& preprocessing() const { return preprocessing_; }
  void setVariant(const std::string& variantId);
  const std::string& variant() const { return variant_; }
  // The test set: a user's picture is told how far it lies from it (InferenceOutcome::
  // dataSetDistance), measured on the runner's thread the first time it is needed.
  void setDataSet(std::shared_ptr<const ImageSet> images) { dataSet_ = std::move(images); }

  void classify(InputImage input);
  // No picture any more (an empty canvas): results of earlier requests are dropped on arrival.
  void clearInput();
  bool hasInput() const { return lastInput_.has_value(); }

  // True from a request until the outcome (or failure) of the newest request has been delivered.
  bool busy() const { return delivered_ < requested_ && requested_ > clearedAt_; }
  std::shared_ptr<const InferenceOutcome> lastOutcome() const { return lastOutcome_; }

 signals:
  void outcomeReady(std::shared_ptr<const InferenceOutcome> outcome);
  void failed(const QString& message);

 private:
  void submit();
  void deliver(quint64 sequence, std::shared_ptr<const InferenceOutcome> outcome, const QString& error);

  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;  // the newest request's
  // The engine and its model's layer titles: used by the runner's thread only, one job at a time.
  std::shared_ptr<LiveEngine> engine_;
  std::shared_ptr<const Model> model_;
  Preprocessing preprocessing_;
  std::string variant_;
  std::shared_ptr<const ImageSet> dataSet_;
  std::optional<InputImage> lastInput_;
  std::shared_ptr<const InferenceOutcome> lastOutcome_;
  quint64 requested_ = 0;
  quint64 delivered_ = 0;
  quint64 clearedAt_ = 0;
};

}  // namespace convscope::ui
