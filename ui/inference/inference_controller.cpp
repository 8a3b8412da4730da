#include "ui/inference/inference_controller.h"

#include <QThread>

#include <algorithm>
#include <chrono>
#include <new>

#include "app/core/engine/benchmark.h"
#include "app/core/engine/engine.h"
#include "app/core/model/layer_titles.h"
#include "ui/inference/device_use_coordinator.h"

namespace convscope::ui {

int InferenceOutcome::topClass() const {
  if (probabilities.empty()) return -1;
  return static_cast<int>(std::max_element(probabilities.begin(), probabilities.end()) - probabilities.begin());
}

InferenceController::InferenceController(QObject* parent) : QObject(parent) {
  worker_ = QThread::create([this] { workerLoop(); });
  worker_->setObjectName("inference");
  worker_->start();
}

InferenceController::~InferenceController() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopRequested_ = true;
  wake_.notify_all();
  DeviceUseCoordinator::shared().wakeWaiters();  // not behind a whole profile or sweep repetition
  worker_->wait();
  delete worker_;
}

void InferenceController::setModel(std::shared_ptr<const Model> model) {
  model_ = std::move(model);
  submit();
}

void InferenceController::setVariant(const std::string& variantId) {
  if (variantId == variant_) return;
  variant_ = variantId;
  submit();
}

void InferenceController::classify(InputImage input) {
  lastInput_ = std::move(input);
  submit();
}

void InferenceController::clearInput() {
  lastInput_.reset();
  lastOutcome_.reset();
  clearedAt_ = requested_;
  std::lock_guard lock(mutex_);
  waiting_.reset();
}

void InferenceController::submit() {
  if (!model_ || variant_.empty() || !lastInput_) return;
  Request request{++requested_, model_, variant_, *lastInput_};
  {
    std::lock_guard lock(mutex_);
    waiting_ = std::move(request);  // replaces a request the worker has not started yet
  }
  wake_.notify_one();
}

void InferenceController::workerLoop() {
  // Owned by this thread alone: "one Engine is used by one thread at a time".
  std::unique_ptr<Engine> engine;
  std::vector<std::string> titles;  // of the engine's model
  for (;;) {
    Request request;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || waiting_.has_value(); });
      if (stopping_) return;
      request = std::move(*waiting_);
      waiting_.reset();
    }
    auto outcome = std::make_shared<InferenceOutcome>();
    QString error;
    const QString picture = request.input.description;  // for the error: the input moves on success
    const int pictureHeight = request.input.image.height, pictureWidth = request.input.image.width;
    try {
      DeviceUseCoordinator::Lease lease(DeviceUseCoordinator::shared(), DeviceJob::LiveInference, &stopRequested_);
      if (!lease.held()) continue;                          // the controller is going away: the loop ends
      const auto start = std::chrono::steady_clock::now();  // after the wait for the device's turn
      if (!engine || &engine->model() != request.model.get() || engine->variantId() != request.variant) {
        engine.reset();  // a GPU engine frees its device memory before the next one allocates
        engine = std::make_unique<Engine>(request.model, request.variant);
        titles = layerTitles(*request.model);
      }
      const Model& model = *request.model;
      const int height = model.inputHeight(), width = model.inputWidth();
      const auto pictureStart = std::chrono::steady_clock::now();  // after the engine is ready
      const GrayImage& source = request.input.image;
      // Aspect ratio kept: a wide photo is padded with its background, not squashed.
      GrayImage sized = source.height == height && source.width == width ? source : resizedToFit(source, height, width);
      const Tensor input({1, 1, height, width}, std::move(sized.pixels));
      InferenceResult result = engine->infer(input, true);
      // What one picture costs: the resize and the captured run, not the timed runs that follow.
      const double pictureSeconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - pictureStart).count();

      // The op times: the median of warm runs (the captured run above may be the engine's first).
      std::vector<std::vector<double>> samples(result.convTimes.size());
      int runs = 0;
      while (runs < kTimedRuns && !(runs > 0 && newerRequestWaiting())) {
        const InferenceResult timed = engine->infer(input, false);
        for (size_t l = 0; l < samples.size() && l < timed.convTimes.size(); ++l)
          samples[l].push_back(timed.convTimes[l].seconds);
        ++runs;
      }
      for (size_t l = 0; l < samples.size(); ++l) result.convTimes[l].seconds = SampleStats::of(samples[l]).median;

      outcome->input = std::move(request.input);
      outcome->modelName = model.name;
      outcome->variant = request.variant;
      outcome->deviceName = engine->deviceName();
      outcome->probabilities = result.probabilities.values();
      outcome->layers = std::move(result.layers);
      // Captured layers are the input, then every node in order; anything else keeps the ONNX names.
      outcome->layerTitles.assign(outcome->layers.size(), std::string());
      if (outcome->layers.size() == titles.size() + 1)
        std::copy(titles.begin(), titles.end(), outcome->layerTitles.begin() + 1);
      outcome->convTimes = std::move(result.convTimes);
      outcome->timedRuns = runs;
      for (const DeviceJob job : lease.othersInProgress()) outcome->busyWith.push_back(deviceJobName(job));
      outcome->pictureSeconds = pictureSeconds;
      outcome->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (const std::bad_alloc&) {  // what() says only "std::bad_alloc"
      engine.reset();
      error = tr("%1: not enough memory to run the model on %2 (%3×%4)")
                  .arg(QString::fromStdString(request.model->sourcePath), picture)
                  .arg(pictureHeight)
                  .arg(pictureWidth);
    } catch (const std::exception& e) {
      engine.reset();
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, sequence = request.sequence, outcome, error] { deliver(sequence, outcome, error); },
        Qt::QueuedConnection);
  }
}

bool InferenceController::newerRequestWaiting() {
  const std::lock_guard lock(mutex_);
  return waiting_.has_value() || stopping_;
}

void InferenceController::deliver(quint64 sequence, std::shared_ptr<const InferenceOutcome> outcome,
                                  const QString& error) {
  delivered_ = std::max(delivered_, sequence);
  if (sequence <= clearedAt_) return;  // asked before the input was cleared
  if (!error.isEmpty()) {
    lastOutcome_.reset();  // the previous picture's prediction is no answer for this one
    emit failed(error);
    return;
  }
  // Shown even when a newer request is on its way: while the pen moves, every finished picture is
  // a step closer to the current one, and skipping them would freeze the display until it stops.
  lastOutcome_ = outcome;
  emit outcomeReady(std::move(outcome));
}

}  // namespace convscope::ui
