#include "ui/inference/inference_controller.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>

#include "app/core/engine/benchmark.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/picture_input.h"
#include "app/core/model/layer_titles.h"
#include "app/core/model/model_card.h"

namespace convscope::ui {

int InferenceOutcome::topClass() const {
  if (probabilities.empty()) return -1;
  return static_cast<int>(std::max_element(probabilities.begin(), probabilities.end()) - probabilities.begin());
}

struct LiveEngine {
  std::unique_ptr<Engine> engine;
  std::vector<std::string> titles;  // of the engine's model
  // The test set's yardstick, built once per set (about a second) when a user's picture needs it.
  std::shared_ptr<const ImageSet> distanceSet;
  std::unique_ptr<DataSetDistance> distance;
};

namespace {

// One picture on the runner's thread: the captured inference, then the timed warm runs.
std::shared_ptr<const InferenceOutcome> infer(JobContext& context, LiveEngine& live,
                                              const std::shared_ptr<const Model>& modelPointer,
                                              const Preprocessing& preprocessing, const std::string& variant,
                                              InputImage picture, const std::shared_ptr<const ImageSet>& dataSet) {
  const auto start = std::chrono::steady_clock::now();
  if (!live.engine || &live.engine->model() != modelPointer.get() || live.engine->variantId() != variant) {
    live.engine.reset();  // a GPU engine frees its device memory before the next one allocates
    live.engine = std::make_unique<Engine>(modelPointer, variant);
    live.titles = layerTitles(*modelPointer);
  }
  Engine& engine = *live.engine;
  engine.setPreprocessing(preprocessing);
  const Model& model = *modelPointer;
  const int height = model.inputHeight(), width = model.inputWidth();
  const auto pictureStart = std::chrono::steady_clock::now();  // after the engine is ready
  // A colour model sees an opened photo in colour, decoded from its file by the model's rule (its
  // inversion too: none for ImageNet's); a gray one sees the gray picture as the window shows it.
  // Drawings and test images are gray: a colour model gets them in three equal channels.
  const bool colour = model.inputChannels() == 3 && !picture.file.isEmpty();
  if (colour) checkPicturesFit(engine, 1, true);  // the model's figures before a photo is decoded
  const Picture source = colour ? loadPictureForModel(engine, picture.file.toStdString()).image : picture.image;
  // Framed by the model's rule (a gray model's: aspect kept, a wide photo padded with its
  // background, not squashed). Refused with the model's figures before the resize when one
  // picture at its input does not fit in memory.
  const Picture sized = pictureAtModelInput(engine, source, true);
  // The values mapped by the rule (mean, deviation, channel order) as classify's batches are.
  const Tensor input = ImageSet::fromImages(picture.description.toStdString(), {sized}, {})
                           .batch(0, 1, height, width, engine.preprocessing());
  InferenceResult result = engine.infer(input, true);
  // What one picture costs: the resize and the captured run, not the timed runs that follow.
  const double pictureSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - pictureStart).count();

  // The op times: the median of warm runs (the captured run above may be the engine's first).
  // Fewer when a newer picture waits: the pen has moved on. The records are the timed runs' own:
  // those run the plan as it is (fused where the variant fuses), the captured run layer by layer.
  std::vector<ConvLayerTime> timedStages;
  std::vector<std::vector<double>> samples;
  int runs = 0;
  while (runs < InferenceController::kTimedRuns &&
         !(runs > 0 && (context.replacementWaiting() || context.cancelled()))) {
    InferenceResult timed = engine.infer(input, false);
    if (runs == 0) {
      timedStages = std::move(timed.convTimes);
      samples.resize(timedStages.size());
      for (size_t l = 0; l < timedStages.size(); ++l) samples[l].push_back(timedStages[l].seconds);
    } else {
      for (size_t l = 0; l < samples.size() && l < timed.convTimes.size(); ++l)
        samples[l].push_back(timed.convTimes[l].seconds);
    }
    ++runs;
  }
  for (size_t l = 0; l < timedStages.size(); ++l) timedStages[l].seconds = SampleStats::of(samples[l]).median;
  result.convTimes = std::move(timedStages);

  auto outcome = std::make_shared<InferenceOutcome>();
  // A picture of the user's (drawn, opened, dropped): how far from the test set it lies.
  // Only where the test set is what the model learnt from: a colour model's is not Fashion-MNIST.
  if (picture.label < 0 && dataSet && dataSet->count() >= 2 && dataSet->channels() == model.inputChannels() &&
      !context.cancelled()) {
    if (live.distanceSet != dataSet) {
      live.distance = std::make_unique<DataSetDistance>(*dataSet);
      live.distanceSet = dataSet;
    }
    outcome->dataSetDistance = live.distance->of(source);
  }
  if (double load[1]; getloadavg(load, 1) == 1) outcome->loadAverage = load[0];
  outcome->cores = static_cast<int>(std::thread::hardware_concurrency());
  outcome->input = std::move(picture);
  outcome->inputIsBgr = engine.preprocessing().channelOrder == ChannelOrder::Bgr;
  outcome->modelName = model.name;
  outcome->model = modelPointer;
  outcome->preprocessing = engine.preprocessing();
  outcome->variant = variant;
  outcome->deviceName = engine.deviceName();
  outcome->probabilities.assign(result.probabilities.values().begin(), result.probabilities.values().end());
  outcome->layers = std::move(result.layers);
  // Captured layers are the input, then every node in order; anything else keeps the ONNX names.
  outcome->layerTitles.assign(outcome->layers.size(), std::string());
  if (outcome->layers.size() == live.titles.size() + 1)
    std::copy(live.titles.begin(), live.titles.end(), outcome->layerTitles.begin() + 1);
  outcome->convTimes = std::move(result.convTimes);
  outcome->timedRuns = runs;
  for (const JobKind other : context.othersInProgress()) outcome->busyWith.push_back(jobKindName(other));
  outcome->pictureSeconds = pictureSeconds;
  outcome->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace

InferenceController::InferenceController(JobRunner* jobs, QObject* parent)
    : QObject(parent), jobs_(jobs), engine_(std::make_shared<LiveEngine>()) {}

InferenceController::~InferenceController() {
  if (jobs_) jobs_->cancel(job_);
}

void InferenceController::setModel(std::shared_ptr<const Model> model) {
  const Preprocessing preprocessing = preprocessingFor(*model, std::nullopt);
  setModel(std::move(model), preprocessing);
}

void InferenceController::setModel(std::shared_ptr<const Model> model, const Preprocessing& preprocessing) {
  model_ = std::move(model);
  preprocessing_ = preprocessing;
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
  if (jobs_) jobs_->cancel(job_);
}

void InferenceController::submit() {
  if (!model_ || variant_.empty() || !lastInput_ || !jobs_) return;
  const quint64 sequence = ++requested_;
  JobRunner::Job job;
  job.kind = JobKind::LiveInference;  // replaces a request the runner has not started yet
  job.work = [this, sequence, engine = engine_, model = model_, preprocessing = preprocessing_, variant = variant_,
              input = *lastInput_, dataSet = dataSet_](JobContext& context) mutable -> std::function<void()> {
    // `this` is used only in what runs on the GUI thread (the runner checks it is still there).
    const QString picture = input.description;  // for the error: the input moves on success
    const int height = input.image.height, width = input.image.width;
    QString error;
    std::shared_ptr<const InferenceOutcome> outcome;
    try {
      outcome = infer(context, *engine, model, preprocessing, variant, std::move(input), dataSet);
    } catch (const std::bad_alloc&) {  // what() says only "std::bad_alloc"
      engine->engine.reset();
      error = tr("%1: not enough memory to run the model on %2 (%3×%4)")
                  .arg(QString::fromStdString(model->sourcePath), picture)
                  .arg(height)
                  .arg(width);
    } catch (const std::exception& e) {
      engine->engine.reset();
      error = QString::fromStdString(e.what());
    }
    return [this, sequence, outcome, error] { deliver(sequence, outcome, error); };
  };
  job_ = jobs_->submit(this, std::move(job));
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
