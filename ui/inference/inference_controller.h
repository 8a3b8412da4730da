// Runs the engine for the picture on screen, off the GUI thread. Requests are coalesced: while
// one inference runs, a newer request replaces any that is still waiting, so a pen moving over
// the drawing canvas never builds a backlog and the latest picture is always the next one done.
// The engine is rebuilt on the worker when the model or the kernel variant changes. Each picture
// is run once with every layer captured, then timed over several warm runs (the op time shown is
// their median); the device is taken through the DeviceUseCoordinator, so a sweep or a profile
// never runs at the same time.
#pragma once

#include <QObject>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "app/core/model/model.h"
#include "ui/inference/inference_outcome.h"

class QThread;

namespace convscope::ui {

class InferenceController : public QObject {
  Q_OBJECT

 public:
  // Warm runs timed per picture; fewer when a newer picture is already waiting (the pen moves).
  static constexpr int kTimedRuns = 5;

  explicit InferenceController(QObject* parent = nullptr);
  ~InferenceController() override;

  // Later requests use this model / variant; the last input is classified again with it.
  void setModel(std::shared_ptr<const Model> model);
  void setVariant(const std::string& variantId);
  const std::string& variant() const { return variant_; }

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
  struct Request {
    quint64 sequence = 0;
    std::shared_ptr<const Model> model;
    std::string variant;
    InputImage input;
  };

  void submit();
  void workerLoop();
  bool newerRequestWaiting();  // worker thread
  void deliver(quint64 sequence, std::shared_ptr<const InferenceOutcome> outcome, const QString& error);

  // Shared with the worker, under mutex_.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Request> waiting_;
  bool stopping_ = false;
  std::atomic<bool> stopRequested_{false};  // stopping_ for the wait for the device's turn
  QThread* worker_ = nullptr;

  // GUI thread only.
  std::shared_ptr<const Model> model_;
  std::string variant_;
  std::optional<InputImage> lastInput_;
  std::shared_ptr<const InferenceOutcome> lastOutcome_;
  quint64 requested_ = 0;
  quint64 delivered_ = 0;
  quint64 clearedAt_ = 0;
};

}  // namespace convscope::ui
