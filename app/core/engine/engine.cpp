#include "app/core/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <set>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/chain_network.h"
#include "app/core/engine/gpu_platform.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/memory_limit.h"

namespace convscope {

Engine::Engine(std::shared_ptr<const Model> model, const std::string& variantId)
    : model_(std::move(model)), variantId_(variantId) {
  const ConvVariant& variant = findConvVariant(variantId);
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    throw Error("kernel variant '" + variantId + "' cannot run here: " + reason);
  onGpu_ = variant.runsOnGpu();
  if (!onGpu_) {
    hostBackend(variantId);
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

ConvBackend& Engine::hostBackend(const std::string& variantId) const {
  std::unique_ptr<ConvBackend>& backend = hostBackends_[variantId];
  if (!backend) backend = createConvBackend(variantId);
  return *backend;
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

// Each intermediate is freed after its last reader unless it is an output, so a 10,000-image
// batch needs memory for a few layers, not all of them.
std::map<std::string, size_t> lastUses(const Model& model) {
  std::map<std::string, size_t> lastUse;
  for (size_t i = 0; i < model.nodes.size(); ++i)
    for (const std::string& name : model.nodes[i].inputs) lastUse[name] = i;
  for (const ValueInfo& output : model.outputs) lastUse[output.name] = model.nodes.size();
  return lastUse;
}

std::string nodeContext(const Model& model, const Node& node) {
  return model.sourcePath + ": node '" + node.name + "' (" + node.opType + "): ";
}

int64_t bytesOf(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count = saturatingMul(count, std::max<int64_t>(d, 0));
  return saturatingMul(count, sizeof(float));
}

}  // namespace

MemoryEstimate Engine::estimateFor(const std::map<std::string, Shape>& inputShapes, bool captureLayers,
                                   int64_t limit) const {
  const Model& model = *model_;
  const std::map<std::string, Shape> shapes = model.inferShapes(inputShapes);
  int64_t live = 0;
  for (const auto& [name, shape] : inputShapes) live = saturatingAdd(live, bytesOf(shape));
  if (captureLayers) live = saturatingMul(live, 2);  // infer() keeps a copy of the input
  const std::map<std::string, size_t> lastUse = lastUses(model);
  // Stage by stage, as evaluate() runs them: a fused stage stores only its last node's output.
  const Plan& plan = planFor(inputShapes, !captureLayers);
  std::set<std::string> produced;
  MemoryEstimate peak;
  for (const PlanStage& stage : plan.stages) {
    const Node& first = model.nodes[stage.nodes.front()];
    const Node& last = model.nodes[stage.nodes.back()];
    const int64_t out = bytesOf(shapes.at(last.output));
    int64_t workspace = 0;
    if (stage.hasConv && !stage.onGpu) {
      std::vector<Shape> in;
      for (const std::string& name : first.inputs) in.push_back(shapes.at(name));
      workspace = hostBackend(stage.variant).workspaceBytes(*first.op->convProblem(in));
    }
    // While the stage runs: what is alive, its output, its workspace, and a captured copy.
    const int64_t kept = captureLayers ? saturatingMul(out, 2) : out;
    const int64_t now = saturatingAdd(saturatingAdd(live, kept), workspace);
    if (now > peak.bytes) peak = {now, first.name, first.opType, workspace};
    if (now > limit) return peak;  // the layer where a run would fail
    live = saturatingAdd(live, kept);
    produced.insert(last.output);
    for (const size_t index : stage.nodes)
      for (const std::string& name : model.nodes[index].inputs)
        if (lastUse.at(name) == index && produced.erase(name)) live -= bytesOf(shapes.at(name));
  }
  // The outputs are copied out of the engine at the end.
  int64_t atEnd = live;
  for (const ValueInfo& output : model.outputs) atEnd = saturatingAdd(atEnd, bytesOf(shapes.at(output.name)));
  if (atEnd > peak.bytes && !model.nodes.empty()) peak = {atEnd, model.nodes.back().name, model.nodes.back().opType, 0};
  return peak;
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
  if (!fits(1)) return 0;
  // The need grows with the batch: double until it no longer fits, then bisect.
  constexpr int64_t kLargest = int64_t{1} << 30;
  int64_t good = 1;
  while (good < kLargest && fits(std::min(good * 2, kLargest))) good = std::min(good * 2, kLargest);
  int64_t bad = std::min(good * 2, kLargest + 1);
  while (bad - good > 1) {
    const int64_t middle = good + (bad - good) / 2;
    (fits(middle) ? good : bad) = middle;
  }
  return static_cast<int>(good);
}

void Engine::checkMemoryFor(const std::map<std::string, Shape>& inputShapes, int64_t batch, bool captureLayers) const {
  const MemoryLimit limit = memoryLimit();
  const MemoryEstimate need = estimateFor(inputShapes, captureLayers, limit.bytes);
  if (need.bytes <= limit.bytes) return;
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

// The one evaluator's view of where values live and how a stage runs: host tensors with the CPU
// variants, device tensors with a GPU variant. The loop that walks the plan, frees values after
// their last reader, captures layers and records conv times is Engine::evaluate, written once.
class Engine::Evaluation {
 public:
  virtual ~Evaluation() = default;
  virtual void bindInput(const std::string& name, const Tensor& value) = 0;
  // A stage without a Conv, or a Conv on its own (the op adds its bias), through the op's code.
  virtual void runOp(const Node& node, const ConvVariant* convVariant) = 0;
  // A fused stage: the conv with its epilogue (bias, activation, pooling) in the variant's kernel.
  virtual void runFused(const Node& conv, const std::string& output, const Shape& outputShape,
                        const ConvProblem& problem, const ConvVariant& variant, const ConvEpilogue& epilogue) = 0;
  // A whole-network stage: every node in the variant's one kernel, from the input to the output.
  virtual void runNetwork(const ChainNetwork& network, const ConvVariant& variant, int64_t batch,
                          const std::string& input, const std::string& output, const Shape& outputShape) = 0;
  virtual Shape shapeOf(const std::string& name) const = 0;
  virtual Tensor fetch(const std::string& name) = 0;
  virtual void release(const std::string& name) = 0;  // after its last reader
  // Waits for the work and returns the seconds of every conv run since the start, in order.
  virtual std::vector<double> finish(double* uploadSeconds) = 0;
};

class Engine::HostEvaluation final : public Engine::Evaluation {
 public:
  explicit HostEvaluation(const Engine& engine) : engine_(engine) {
    for (const auto& [name, tensor] : engine.model().weights) values_[name] = &tensor;
  }

  void bindInput(const std::string& name, const Tensor& value) override { values_[name] = &value; }

  void runOp(const Node& node, const ConvVariant* convVariant) override {
    struct TimedConv final : ConvExecutor {
      ConvBackend* backend = nullptr;
      std::vector<double>* seconds = nullptr;
      void convolve(const ConvProblem& problem, const float* x, const float* w, float* y) override {
        if (!backend) throw Error("internal: a convolution outside a conv stage");
        const auto start = std::chrono::steady_clock::now();
        backend->forward(problem, x, w, y);
        seconds->push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    } conv;
    if (convVariant) conv.backend = &engine_.hostBackend(convVariant->id);
    conv.seconds = &seconds_;
    store(node.output, node.op->run(inputsOf(node), conv));
  }

  void runFused(const Node& node, const std::string& output, const Shape& outputShape, const ConvProblem& problem,
                const ConvVariant& variant, const ConvEpilogue& epilogue) override {
    const std::vector<const Tensor*> in = inputsOf(node);
    Tensor out(outputShape);
    ConvEpilogue withBias = epilogue;
    if (in.size() > 2) withBias.bias = in[2]->data();
    const auto start = std::chrono::steady_clock::now();
    engine_.hostBackend(variant.id).forwardFused(problem, in[0]->data(), in[1]->data(), out.data(), withBias);
    seconds_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    store(output, std::move(out));
  }

  void runNetwork(const ChainNetwork&, const ConvVariant& variant, int64_t, const std::string&, const std::string&,
                  const Shape&) override {
    throw Error("internal: the whole-network variant " + variant.id + " was planned on the CPU");
  }

  Shape shapeOf(const std::string& name) const override { return values_.at(name)->shape(); }
  Tensor fetch(const std::string& name) override { return *values_.at(name); }
  void release(const std::string& name) override {
    if (produced_.erase(name)) values_.erase(name);  // weights and inputs belong to others
  }
  std::vector<double> finish(double* uploadSeconds) override {
    if (uploadSeconds) *uploadSeconds = 0.0;
    return seconds_;
  }

 private:
  std::vector<const Tensor*> inputsOf(const Node& node) const {
    std::vector<const Tensor*> in;
    for (const std::string& name : node.inputs) in.push_back(values_.at(name));
    return in;
  }
  void store(const std::string& name, Tensor value) { values_[name] = &(produced_[name] = std::move(value)); }

  const Engine& engine_;
  std::map<std::string, const Tensor*> values_;
  std::map<std::string, Tensor> produced_;
  std::vector<double> seconds_;
};

class Engine::DeviceEvaluation final : public Engine::Evaluation {
 public:
  explicit DeviceEvaluation(Engine& engine)
      : engine_(engine), device_(*engine.device_), values_(engine.deviceWeights_) {
    device_.beginRun();
  }

  // The batch's copy to the GPU is timed on its own: a host round trip of an op uploads too.
  void bindInput(const std::string& name, const Tensor& value) override {
    bindOnDevice(name, [&] { return device_.upload(value.data(), value.shape()); });
  }
  // An input that `upload` puts on the device (the end-to-end path's bytes, resized there).
  void bindOnDevice(const std::string& name, const std::function<DeviceTensor()>& upload) {
    uploads_.push_back(device_.timed([&] { values_[name] = upload(); }));
  }
  const DeviceTensor& deviceValue(const std::string& name) const { return values_.at(name); }
  // The input as 8-bit images in the device's staging buffer, for a whole-network kernel that
  // resizes as it reads; `copy`: stage them now from `images.pixels` (else a replay stages them).
  void bindStagedBytes(const ByteImages& images, int outHeight, int outWidth, bool copy) {
    if (copy)
      uploads_.push_back(
          device_.timed([&] { device_.stageImageBytes(images.pixels, images.count, images.height, images.width); }));
    staged_ = device_.stagedImageBytes(images.count, images.height, images.width, outHeight, outWidth);
    stagedHeight_ = images.height;
    stagedWidth_ = images.width;
  }

  void runNetwork(const ChainNetwork& network, const ConvVariant& variant, int64_t batch, const std::string& input,
                  const std::string& output, const Shape& outputShape) override {
    NetworkRun run;
    run.images = static_cast<int>(batch);
    if (staged_.bytes) {
      run.bytes = staged_.bytes;
      run.byteHeight = stagedHeight_;
      run.byteWidth = stagedWidth_;
      run.rowTaps = staged_.rowTaps;
      run.colTaps = staged_.colTaps;
    } else {
      run.input = values_.at(input).data();
    }
    const auto add = [&](const std::string& weights, const std::string& bias) {
      run.weights.push_back(values_.at(weights).data());
      run.biases.push_back(bias.empty() ? nullptr : values_.at(bias).data());
    };
    for (const ChainConv& conv : network.convs) add(conv.weights, conv.bias);
    for (const ChainDense& dense : network.dense) add(dense.weights, dense.bias);
    DeviceTensor out = device_.allocate(outputShape);
    run.output = out.data();
    timings_.push_back(device_.timed([&] { variant.runNetwork(device_, network, run); }));
    values_[output] = std::move(out);
  }

  void runOp(const Node& node, const ConvVariant* convVariant) override {
    if (convVariant && !convVariant->runsOnGpu()) return runConvOnHost(node, *convVariant);
    DeviceRun run{device_, [&](const ConvProblem& problem, const float* x, const float* w, float* y) {
                    if (!convVariant) throw Error("internal: a convolution outside a conv stage");
                    timings_.push_back(
                        device_.timed([&] { convVariant->runOnDevice(device_, problem, x, w, y, ConvEpilogue{}); }));
                  }};
    values_[node.output] = node.op->runOnDevice(inputsOf(node), run);
  }

  void runFused(const Node& node, const std::string& output, const Shape& outputShape, const ConvProblem& problem,
                const ConvVariant& variant, const ConvEpilogue& epilogue) override {
    const std::vector<const DeviceTensor*> in = inputsOf(node);
    DeviceTensor out = device_.allocate(outputShape);
    ConvEpilogue withBias = epilogue;
    if (in.size() > 2) withBias.bias = in[2]->data();
    timings_.push_back(device_.timed(
        [&] { variant.runOnDevice(device_, problem, in[0]->data(), in[1]->data(), out.data(), withBias); }));
    values_[output] = std::move(out);
  }

  // A conv the plan gave to a CPU variant (no GPU variant computes its shape): the inputs come to
  // the host, the variant runs there, the output goes back; the op time covers the round trip.
  void runConvOnHost(const Node& node, const ConvVariant& variant) {
    struct HostConv final : ConvExecutor {
      ConvBackend* backend = nullptr;
      void convolve(const ConvProblem& problem, const float* x, const float* w, float* y) override {
        backend->forward(problem, x, w, y);
      }
    } conv;
    conv.backend = &engine_.hostBackend(variant.id);
    timings_.push_back(device_.timed([&] {
      std::vector<Tensor> host;
      for (const DeviceTensor* in : inputsOf(node)) {
        host.emplace_back(in->shape);
        device_.download(*in, host.back().data());
      }
      std::vector<const Tensor*> pointers;
      for (const Tensor& t : host) pointers.push_back(&t);
      const Tensor out = node.op->run(pointers, conv);
      values_[node.output] = device_.upload(out.data(), out.shape());
    }));
  }

  Shape shapeOf(const std::string& name) const override { return values_.at(name).shape; }
  Tensor fetch(const std::string& name) override {
    const DeviceTensor& value = values_.at(name);
    Tensor host(value.shape);
    device_.download(value, host.data());
    return host;
  }
  void release(const std::string& name) override { values_.erase(name); }  // weights stay in the engine
  std::vector<double> finish(double* uploadSeconds) override {
    device_.synchronize();
    std::vector<double> seconds;
    for (int timing : timings_) seconds.push_back(device_.elapsedSeconds(timing));
    if (uploadSeconds) {
      *uploadSeconds = 0.0;
      for (int timing : uploads_) *uploadSeconds += device_.elapsedSeconds(timing);
    }
    return seconds;
  }

 private:
  std::vector<const DeviceTensor*> inputsOf(const Node& node) const {
    std::vector<const DeviceTensor*> in;
    for (const std::string& name : node.inputs) in.push_back(&values_.at(name));
    return in;
  }

  Engine& engine_;
  Device& device_;
  std::map<std::string, DeviceTensor> values_;
  std::vector<int> timings_;  // the conv stages'
  std::vector<int> uploads_;  // the batch's
  Device::StagedImages staged_;
  int stagedHeight_ = 0, stagedWidth_ = 0;
};

const Plan& Engine::planFor(const std::map<std::string, Shape>& inputShapes, bool fuse) const {
  // The memory check and the run of one inference plan the same shapes: plan them once.
  if (!lastPlan_ || lastPlan_->inputShapes != inputShapes || lastPlan_->fuse != fuse)
    lastPlan_ = PlannedShapes{inputShapes, fuse, makePlan(*model_, variantId_, inputShapes, fuse)};
  return lastPlan_->plan;
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
    values = std::make_unique<DeviceEvaluation>(*this);
  else
    values = std::make_unique<HostEvaluation>(*this);
  for (const ValueInfo& input : model.inputs) values->bindInput(input.name, *inputs.at(input.name));
  std::vector<ConvLayerTime> stageTimes;
  // The batch, for a whole-network stage: the first input's first dimension (a graph may have none).
  const int64_t batch = inputShapes.empty() || inputShapes.begin()->second.empty() ? 1 : inputShapes.begin()->second[0];
  runPlan(plan, batch, *values, stageTimes, captured);
  return finishPlan(*values, stageTimes, convTimes, uploadSeconds);
}

void Engine::runPlan(const Plan& plan, int64_t batch, Evaluation& values, std::vector<ConvLayerTime>& stageTimes,
                     std::vector<LayerOutput>* captured) const {
  const Model& model = *model_;
  const std::map<std::string, size_t> lastUse = lastUses(model);
  for (const PlanStage& stage : plan.stages) {
    const Node& first = model.nodes[stage.nodes.front()];
    const Node& last = model.nodes[stage.nodes.back()];
    try {
      if (stage.wholeNetwork) {
        if (!stage.network) throw Error("internal: a whole-network stage without its network");
        const ChainNetwork& network = *stage.network;
        // One record for the one kernel: its time, FLOPs and bytes are the whole network's;
        // `problem` names its first conv layer.
        ConvProblem problem = network.convs.front().problem;
        problem.batch = static_cast<int>(batch);
        ConvLayerTime record{first.name, problem, 0.0, stage.variant, "", {}, 0};
        for (size_t k = 1; k < stage.nodes.size(); ++k) record.fusedNodes.push_back(model.nodes[stage.nodes[k]].name);
        record.outputElements = batch * network.classes();
        record.stageFlops = batch * network.flopsPerImage;
        record.stageBytes = 4 * (batch * int64_t{network.inputHeight} * network.inputWidth + network.weightElements +
                                 record.outputElements);
        values.runNetwork(network, findConvVariant(stage.variant), batch, model.imageInput().name, last.output,
                          {batch, network.classes()});
        stageTimes.push_back(std::move(record));
      } else if (stage.hasConv) {
        std::vector<Shape> shapes;
        for (const std::string& name : first.inputs) shapes.push_back(values.shapeOf(name));
        const ConvProblem problem = *first.op->convProblem(shapes);
        const ConvVariant& variant = findConvVariant(stage.variant);
        ConvLayerTime record{
            first.name, problem, 0.0, stage.variant, stage.fallbackReason, {}, problem.outputElements()};
        if (stage.fused()) {
          ConvEpilogue epilogue;
          Shape shape = first.op->outputShape(shapes);
          for (size_t k = 1; k < stage.nodes.size(); ++k) {
            const Node& node = model.nodes[stage.nodes[k]];
            const EpilogueStep step = *node.op->asEpilogueStep(shape);
            if (step.isPool) {
              epilogue.hasPool = true;
              epilogue.maxPool = step.maxPool;
              epilogue.pool = step.pool;
            } else {
              epilogue.hasActivation = true;
              epilogue.activation = step.activation;
            }
            shape = node.op->outputShape({shape});
            record.fusedNodes.push_back(node.name);
          }
          record.outputElements = elementCount(shape);
          values.runFused(first, last.output, shape, problem, variant, epilogue);
        } else {
          values.runOp(first, &variant);
        }
        stageTimes.push_back(std::move(record));
      } else {
        values.runOp(first, nullptr);
      }
    } catch (const Error& e) {
      throw Error(nodeContext(model, first) + e.what());
    }
    if (captured) captured->push_back({last.name, last.opType, values.fetch(last.output)});
    for (const size_t index : stage.nodes)
      for (const std::string& name : model.nodes[index].inputs)
        if (lastUse.at(name) == index) values.release(name);
  }
}

std::map<std::string, Tensor> Engine::finishPlan(Evaluation& values, std::vector<ConvLayerTime>& stageTimes,
                                                 std::vector<ConvLayerTime>* convTimes, double* uploadSeconds) const {
  const Model& model = *model_;
  std::map<std::string, Tensor> outputs;
  for (const ValueInfo& output : model.outputs) {
    try {
      outputs[output.name] = values.fetch(output.name);
    } catch (const std::out_of_range&) {
      throw Error(model.sourcePath + ": output '" + output.name + "' was not computed");
    }
  }
  const std::vector<double> seconds = values.finish(uploadSeconds);
  if (seconds.size() != stageTimes.size()) throw Error("internal: conv stages and their timings disagree");
  for (size_t k = 0; k < seconds.size(); ++k) stageTimes[k].seconds = seconds[k];
  if (convTimes) convTimes->insert(convTimes->end(), stageTimes.begin(), stageTimes.end());
  return outputs;
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
  result.probabilities = model_->endsWithSoftmax() ? std::move(out) : softmaxRows(out);
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
  DeviceEvaluation values(*this);
  if (wholeNetwork(plan))  // its kernel resizes as it reads the bytes
    values.bindStagedBytes(images, height, width, true);
  else
    values.bindOnDevice(input.name, [&] {
      return device_->uploadImageBytes(images.pixels, images.count, images.height, images.width, height, width);
    });
  std::vector<ConvLayerTime> stageTimes;
  InferenceResult result;
  runPlan(plan, images.count, values, stageTimes, nullptr);
  std::map<std::string, Tensor> outputs = finishPlan(values, stageTimes, &result.convTimes, &result.uploadSeconds);
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

  device_->beginRecording();
  try {
    {  // every value allocated while recording is freed before it ends
      DeviceEvaluation values(*this);
      if (wholeNetwork(plan))
        values.bindStagedBytes(images, height, width, false);
      else
        values.bindOnDevice(input.name, [&] {
          return device_->resizeImageBytes(images.count, images.height, images.width, height, width);
        });
      std::vector<ConvLayerTime> stageTimes;
      runPlan(plan, images.count, values, stageTimes, nullptr);
      const DeviceTensor& out = values.deviceValue(model.outputs.front().name);
      if (out.shape != recorded->outputShape) throw Error("internal: the output's shape differs from the inferred one");
      device_->downloadAsync(out, static_cast<float*>(recorded->scores->data()));
    }
    recorded->work = device_->endRecording();
  } catch (const std::exception& e) {
    device_->cancelRecording();
    recordingDeclined_ = e.what();
    recorded->work.reset();
  }
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

Tensor softmaxRows(const Tensor& logits) {
  Tensor out(logits.shape());
  const int64_t rows = logits.dim(0);
  const int64_t cols = logits.dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = logits.data() + r * cols;
    float* dst = out.data() + r * cols;
    float peak = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) peak = std::max(peak, src[c]);
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) sum += dst[c] = std::exp(src[c] - peak);
    for (int64_t c = 0; c < cols; ++c) dst[c] /= sum;
  }
  return out;
}

}  // namespace convscope
