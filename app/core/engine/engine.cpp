#include "app/core/engine/engine.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/device_recording.h"
#include "app/core/util/error.h"
#include "app/core/util/host_softmax.h"
#include "app/core/util/input_file.h"
#include "app/core/util/memory_limit.h"

namespace convscope {

Engine::Engine(std::shared_ptr<const Model> model, const std::string& variantId)
    : model_(std::move(model)), variantId_(variantId), plans_(*model_, variantId) {
  // Any graph can be evaluated; a picture classifier's pictures get its channels' default rule.
  const bool colour =
      model_->inputs.size() == 1 && model_->inputs.front().shape.size() == 4 && model_->inputs.front().shape[1] == 3;
  preprocessing_ = defaultPreprocessing(colour ? 3 : 1);
  const ConvVariant& variant = findConvVariant(variantId);
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    throw Error("kernel variant '" + variantId + "' cannot run here: " + reason);
  onGpu_ = variant.runsOnGpu();
  if (!onGpu_) {
    hostBackends_.get(variantId);
    return;
  }
  device_ = createGpuDevice();
  for (const auto& [name, tensor] : model_->weights)
    deviceWeights_[name] = device_->upload(tensor.data(), tensor.shape());
  device_->synchronize();
}

std::string Engine::deviceName() const {
  return device_ ? device_->name() : "CPU";
}

Engine::~Engine() = default;

namespace {

void checkInputs(const Model& model, const std::map<std::string, const Tensor*>& inputs) {
  for (const ValueInfo& input : model.inputs) {
    const auto it = inputs.find(input.name);
    if (it == inputs.end()) throw Error(model.sourcePath + ": no value given for input '" + input.name + "'");
    const Shape& given = it->second->shape();
    bool matches = given.size() == input.shape.size();
    for (size_t d = 0; matches && d < given.size(); ++d) matches = input.shape[d] < 0 || input.shape[d] == given[d];
    if (!matches)
      throw Error(model.sourcePath + ": input '" + input.name + "' must have shape " + shapeToString(input.shape) +
                  " (-1 = any), got " + shapeToString(given));
  }
}

}  // namespace

MemoryEstimate Engine::estimateFor(const std::map<std::string, Shape>& inputShapes, bool captureLayers,
                                   int64_t limit) const {
  const auto workspace = [this](const std::string& variant, const ConvProblem& problem) {
    return hostBackends_.get(variant).workspaceBytes(problem);
  };
  return estimatePeakMemory(*model_, planFor(inputShapes, !captureLayers), inputShapes, captureLayers, workspace,
                            limit);
}

MemoryEstimate Engine::estimateMemory(int64_t batch, bool captureLayers) const {
  return estimateFor(model_->inputShapesFor(batch), captureLayers);
}

int Engine::largestBatchThatFits(bool captureLayers) const {
  const int64_t limit = memoryLimit().bytes;
  const auto fits = [&](int64_t batch) {
    try {
      return estimateFor(model_->inputShapesFor(batch), captureLayers, limit).bytes <= limit;
    } catch (const Error&) {
      return false;  // a shape that overflows for this batch
    }
  };
  return static_cast<int>(largestBatchWhere(fits));
}

void Engine::checkMemoryFor(const std::map<std::string, Shape>& inputShapes, int64_t batch, bool captureLayers) const {
  const MemoryLimit limit = memoryLimit();
  // The CPU backends' workspaces depend on how many threads share a batch.
  const int threads = omp_get_max_threads();
  if (passedCheck_ && passedCheck_->inputShapes == inputShapes && passedCheck_->captureLayers == captureLayers &&
      passedCheck_->threads == threads && passedCheck_->need.bytes <= limit.bytes)
    return;
  const MemoryEstimate need = estimateFor(inputShapes, captureLayers, limit.bytes);
  if (need.bytes <= limit.bytes) {
    // Within the limit the estimate walked every stage: `need` is the whole peak, valid for any limit.
    passedCheck_ = PassedCheck{inputShapes, captureLayers, threads, need};
    return;
  }
  std::string message = model_->sourcePath + ": layer '" + need.node + "' (" + need.opType + ") needs " +
                        formatBytes(need.bytes) + " for batch " + std::to_string(batch);
  if (need.workspaceBytes > 0)
    message += " (" + formatBytes(need.workspaceBytes) + " of it the im2col workspace of " + variantId_ + ")";
  message += "; the limit is " + formatBytes(limit.bytes) + " (" + limit.origin + ")";
  const int fits = largestBatchThatFits(captureLayers);
  message += fits == 0 ? "; not even one image fits" : "; at most batch " + std::to_string(fits) + " fits";
  throw Error(message);
}

void Engine::checkMemory(int64_t batch, bool captureLayers) const {
  checkMemoryFor(model_->inputShapesFor(batch), batch, captureLayers);
}

std::map<std::string, Tensor> Engine::evaluate(const std::map<std::string, Tensor>& inputs,
                                               std::vector<ConvLayerTime>* convTimes,
                                               std::vector<LayerOutput>* captured) {
  InputRefs refs;
  for (const auto& [name, tensor] : inputs) refs[name] = &tensor;
  checkInputs(*model_, refs);
  std::map<std::string, Shape> shapes;
  for (const auto& [name, tensor] : inputs) shapes[name] = tensor.shape();
  const int64_t batch = inputs.empty() || inputs.begin()->second.rank() == 0 ? 1 : inputs.begin()->second.dim(0);
  checkMemoryFor(shapes, batch, captured != nullptr);
  return evaluate(refs, convTimes, captured, nullptr);
}

Plan Engine::plan(int64_t batch, bool fuse) const {
  return planFor(model_->inputShapesFor(batch), fuse);
}

std::map<std::string, Tensor> Engine::evaluate(const InputRefs& inputs, std::vector<ConvLayerTime>* convTimes,
                                               std::vector<LayerOutput>* captured, double* uploadSeconds) {
  const Model& model = *model_;
  checkInputs(model, inputs);
  std::map<std::string, Shape> inputShapes;
  for (const auto& [name, tensor] : inputs) inputShapes[name] = tensor->shape();
  const Plan& plan = planFor(inputShapes, captured == nullptr);

  std::unique_ptr<Evaluation> values;
  if (device_)
    values = std::make_unique<DeviceEvaluation>(*device_, deviceWeights_, hostBackends_);
  else
    values = std::make_unique<HostEvaluation>(model, hostBackends_);
  for (const ValueInfo& input : model.inputs) values->bindInput(input.name, *inputs.at(input.name));
  std::vector<ConvLayerTime> stageTimes;
  // The batch, for a whole-network stage: the first input's first dimension (a graph may have none).
  const int64_t batch = inputShapes.empty() || inputShapes.begin()->second.empty() ? 1 : inputShapes.begin()->second[0];
  runPlan(*model_, plan, batch, *values, stageTimes, captured);
  return finishPlan(model, *values, stageTimes, convTimes, uploadSeconds);
}

InferenceResult Engine::infer(const Tensor& images, bool captureLayers) {
  const ValueInfo& input = model_->imageInput();
  checkInputs(*model_, {{input.name, &images}});
  checkMemoryFor({{input.name, images.shape()}}, images.rank() ? images.dim(0) : 1, captureLayers);
  InferenceResult result;
  if (captureLayers) result.layers.push_back({"input", "Input", images});
  std::map<std::string, Tensor> outputs = evaluate(InputRefs{{input.name, &images}}, &result.convTimes,
                                                   captureLayers ? &result.layers : nullptr, &result.uploadSeconds);
  result.probabilities = probabilitiesFrom(std::move(outputs.begin()->second), images.dim(0)).probabilities;
  return result;
}

InferenceResult Engine::probabilitiesFrom(Tensor out, int64_t batch) const {
  if (out.rank() != 2 || out.dim(0) != batch || out.dim(1) < 1)
    throw Error(model_->sourcePath + ": the output has shape " + shapeToString(out.shape()) +
                "; a classifier gives one row of class scores per image");
  InferenceResult result;
  if (model_->endsWithSoftmax()) {
    result.probabilities = std::move(out);
  } else {
    result.probabilities = Tensor(out.shape());
    softmaxAlongAxis(out.data(), result.probabilities.data(), out.dim(0), out.dim(1), 1);
  }
  return result;
}

std::unique_ptr<PinnedMemory> Engine::pinHostMemory(void* host, size_t bytes) {
  return device_ && host && bytes ? device_->pin(host, bytes) : nullptr;
}

namespace {
bool wholeNetwork(const Plan& plan) {
  return plan.stages.size() == 1 && plan.stages.front().wholeNetwork;
}
}  // namespace

struct Engine::RecordedBatch {
  int count = 0, height = 0, width = 0;
  // The device's staging buffer the recording reads: a larger batch since may have moved it.
  const uint8_t* stagedBytes = nullptr;
  Shape outputShape;
  std::unique_ptr<PinnedMemory> scores;  // where the recording leaves the output
  std::unique_ptr<RecordedWork> work;
};

InferenceResult Engine::inferBytes(const ByteImages& images) {
  if (!images.pixels || images.count < 1 || images.height < 1 || images.width < 1)
    throw Error("8-bit images: " + std::to_string(images.count) + " of " + std::to_string(images.height) + "x" +
                std::to_string(images.width) + " cannot form a batch");
  const ValueInfo& input = model_->imageInput();
  // The 8-bit path resizes gray pictures and leaves their values as x / 255: what the course's
  // models take. Colour and a model's own value mapping go through infer(ImageSet::batch(...)).
  if (model_->inputChannels() != 1 || !preprocessing_.leavesValuesAsTheyAre())
    throw Error(model_->sourcePath +
                ": the 8-bit end-to-end path takes gray pictures whose values the model uses as they are (x / 255); "
                "this model's input is " +
                std::to_string(model_->inputChannels()) + " channel(s), " +
                describePreprocessing(preprocessing_, model_->inputChannels()));
  const int height = model_->inputHeight(), width = model_->inputWidth();
  if (!device_) return infer(batchFromBytes(images.pixels, images.count, images.height, images.width, height, width));

  const std::map<std::string, Shape> inputShapes{{input.name, {images.count, 1, height, width}}};
  checkMemoryFor(inputShapes, images.count, false);
  const bool shapeSeen = recorded_ && recorded_->count == images.count && recorded_->height == images.height &&
                         recorded_->width == images.width;
  if (shapeSeen && recorded_->work) {
    device_->stageImageBytes(images.pixels, images.count, images.height, images.width);
    if (device_->stagedImageBytes(images.count, images.height, images.width, height, width).bytes ==
        recorded_->stagedBytes)
      return replay(*recorded_, images);
    recorded_.reset();  // the buffer moved: run, and record again
  }

  const Plan& plan = planFor(inputShapes, true);
  DeviceEvaluation values(*device_, deviceWeights_, hostBackends_);
  if (wholeNetwork(plan))  // its kernel resizes as it reads the bytes
    values.bindStagedBytes(images, height, width, true);
  else
    values.bindOnDevice(input.name, [&] {
      return device_->uploadImageBytes(images.pixels, images.count, images.height, images.width, height, width);
    });
  std::vector<ConvLayerTime> stageTimes;
  InferenceResult result;
  runPlan(*model_, plan, images.count, values, stageTimes, nullptr);
  std::map<std::string, Tensor> outputs =
      finishPlan(*model_, values, stageTimes, &result.convTimes, &result.uploadSeconds);
  InferenceResult scored = probabilitiesFrom(std::move(outputs.begin()->second), images.count);
  result.probabilities = std::move(scored.probabilities);

  // Small batches: this run warmed everything up (workspaces, algorithm choices, the resize's
  // taps), so the next one with this shape can replay a recording of it.
  if (images.count <= kRecordedBatchLimit && !(recorded_ && shapeSeen)) {  // not yet tried for this shape
    recorded_.reset();
    recorded_ = recordBatch(images);
  }
  return result;
}

std::vector<StageTime> Engine::timeEndToEndStages(const ByteImages& images) {
  if (!images.pixels || images.count < 1 || images.height < 1 || images.width < 1)
    throw Error("8-bit images: " + std::to_string(images.count) + " of " + std::to_string(images.height) + "x" +
                std::to_string(images.width) + " cannot form a batch");
  const Model& model = *model_;
  if (model.outputs.size() != 1)
    throw Error(model.sourcePath + ": the end-to-end stages are timed for a model with one output");
  const ValueInfo& input = model.imageInput();
  const int height = model.inputHeight(), width = model.inputWidth();
  const std::map<std::string, Shape> inputShapes{{input.name, {images.count, 1, height, width}}};
  checkMemoryFor(inputShapes, images.count, false);
  const Plan& plan = planFor(inputShapes, true);
  std::vector<ConvLayerTime> convTimes;
  // The host's share: the scores into a tensor of their own, probabilities made where the model
  // ends without a softmax (as inferBytes and replay() do).
  const auto hostShare = [&](const std::function<Tensor()>& scoresOut) {
    const auto start = std::chrono::steady_clock::now();
    probabilitiesFrom(scoresOut(), images.count);
    return StageTime{"host: probabilities", "host",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  };

  if (!device_) {  // as inferBytes: the bytes become floats on the host, then the plan runs there
    HostEvaluation values(model, hostBackends_);
    values.timeEveryStage(true);
    Tensor floats;
    values.runStage("resize", "resize", [&] {
      floats = batchFromBytes(images.pixels, images.count, images.height, images.width, height, width);
    });
    values.bindInput(input.name, floats);
    runPlan(model, plan, images.count, values, convTimes, nullptr);
    values.finish(nullptr);
    std::vector<StageTime> stages = values.timedStages();
    stages.push_back(hostShare([&] { return values.fetch(model.outputs.front().name); }));
    return stages;
  }

  // The replayed step's work, stage by stage: the bytes staged, resized (in the whole-network
  // kernel, where it reads them), the plan, the scores copied into pinned memory. After the upload
  // the rest is held back until all of it is queued, so that it runs back to back as the replay
  // does and each stage's timing points time the stage, not its launch: the host's launches are
  // the gaps. Not with a stage that goes through the host (it waits for the GPU).
  const Shape outputShape = model.inferShapes(inputShapes).at(model.outputs.front().name);
  const auto scores = device_->allocatePinned(static_cast<size_t>(elementCount(outputShape)) * sizeof(float));
  DeviceEvaluation values(*device_, deviceWeights_, hostBackends_);
  values.timeEveryStage(true);
  values.runStage("upload", "upload",
                  [&] { device_->stageImageBytes(images.pixels, images.count, images.height, images.width); });
  device_->stagedImageBytes(images.count, images.height, images.width, height, width);  // its taps made: that waits
  bool throughHost = false;
  for (const PlanStage& stage : plan.stages) throughHost = throughHost || stage.hostRoundTrip;
  {
    const std::unique_ptr<QueueGate> gate = throughHost ? nullptr : device_->holdQueue();
    if (wholeNetwork(plan))
      values.bindStagedBytes(images, height, width, false);
    else
      values.runStage("resize", "resize", [&] {
        values.bindOnDevice(input.name, [&] {
          return device_->resizeImageBytes(images.count, images.height, images.width, height, width);
        });
      });
    runPlan(model, plan, images.count, values, convTimes, nullptr);
    const DeviceTensor& out = values.deviceValue(model.outputs.front().name);
    if (out.shape != outputShape)
      throw Error("the output's shape " + shapeToString(out.shape) + " differs from the inferred " +
                  shapeToString(outputShape));
    values.runStage("download", "download", [&] { device_->downloadAsync(out, static_cast<float*>(scores->data())); });
  }                        // the gate opens: the queued work runs
  values.finish(nullptr);  // waits: every timing point has been passed
  std::vector<StageTime> stages = values.timedStages();
  stages.push_back(hostShare([&] {
    Tensor host(outputShape);
    std::copy_n(static_cast<const float*>(scores->data()), host.size(), host.data());
    return host;
  }));
  return stages;
}

std::unique_ptr<Engine::RecordedBatch> Engine::recordBatch(const ByteImages& images) {
  const Model& model = *model_;
  const ValueInfo& input = model.imageInput();
  const int height = model.inputHeight(), width = model.inputWidth();
  const Plan& plan = planFor({{input.name, {images.count, 1, height, width}}}, true);
  // A declined shape is remembered as a recording without work, so it is not tried again.
  auto recorded = std::make_unique<RecordedBatch>();
  recorded->count = images.count;
  recorded->height = images.height;
  recorded->width = images.width;
  recordingDeclined_.clear();
  if (model.outputs.size() != 1) recordingDeclined_ = "the model has more than one output";
  for (const PlanStage& stage : plan.stages)
    if (stage.hostRoundTrip) recordingDeclined_ = "the plan goes through the host";
  if (!recordingDeclined_.empty()) return recorded;
  // Allocated before the recording starts: allocating page-locked memory is no stream work.
  recorded->stagedBytes = device_->stagedImageBytes(images.count, images.height, images.width, height, width).bytes;
  recorded->outputShape =
      model.inferShapes({{input.name, {images.count, 1, height, width}}}).at(model.outputs.front().name);
  recorded->scores = device_->allocatePinned(static_cast<size_t>(elementCount(recorded->outputShape)) * sizeof(float));

  RecordingOutcome outcome = recordWork(*device_, [&] {
    // Every value allocated while recording is freed before the recording ends.
    DeviceEvaluation values(*device_, deviceWeights_, hostBackends_);
    if (wholeNetwork(plan))
      values.bindStagedBytes(images, height, width, false);
    else
      values.bindOnDevice(input.name, [&] {
        return device_->resizeImageBytes(images.count, images.height, images.width, height, width);
      });
    std::vector<ConvLayerTime> stageTimes;
    runPlan(*model_, plan, images.count, values, stageTimes, nullptr);
    const DeviceTensor& out = values.deviceValue(model.outputs.front().name);
    if (out.shape != recorded->outputShape)
      throw Error("the output's shape " + shapeToString(out.shape) + " differs from the inferred " +
                  shapeToString(recorded->outputShape));
    device_->downloadAsync(out, static_cast<float*>(recorded->scores->data()));
  });
  recorded->work = std::move(outcome.work);
  recordingDeclined_ = std::move(outcome.failure);
  return recorded;
}

InferenceResult Engine::replay(RecordedBatch& recorded, const ByteImages& images) {
  recorded.work->replay();  // the caller staged the bytes
  Tensor out(recorded.outputShape);
  std::copy_n(static_cast<const float*>(recorded.scores->data()), out.size(), out.data());
  InferenceResult result = probabilitiesFrom(std::move(out), images.count);
  result.replayed = true;
  return result;
}

}  // namespace convscope
