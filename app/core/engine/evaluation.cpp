#include "app/core/engine/evaluation.h"

#include <chrono>

#include "app/core/engine/chain_network.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string nodeContext(const Model& model, const Node& node) {
  return model.sourcePath + ": node '" + node.name + "' (" + node.opType + "): ";
}

// "conv 1", "tanh 2", "dense 1": each node's kind numbered per kind in execution order, as the
// layer titles begin (layer_titles.h) -- the name a breakdown gives a stage.
std::vector<std::string> shortLayerNames(const Model& model) {
  std::map<std::string, int> numberOfKind;
  std::vector<std::string> names;
  for (const Node& node : model.nodes) {
    const std::string& kind = node.op->description().kind;
    names.push_back(kind + " " + std::to_string(++numberOfKind[kind]));
  }
  return names;
}

// A stage as a breakdown names it: its first layer, and the kinds fused into it.
std::string stageName(const Model& model, const PlanStage& stage, const std::vector<std::string>& names) {
  if (stage.wholeNetwork) return "whole network";  // the variant's one kernel
  std::string name = names[stage.nodes.front()];
  for (size_t k = 1; k < stage.nodes.size(); ++k) name += " + " + model.nodes[stage.nodes[k]].op->description().kind;
  return name;
}

// Stages that only rename a value: no work on the GPU, no stage of a breakdown.
bool onlyRenames(const Model& model, const PlanStage& stage) {
  for (const size_t index : stage.nodes) {
    const LayerRole role = model.nodes[index].op->description().role;
    if (role != LayerRole::Flattening && role != LayerRole::PassThrough) return false;
  }
  return true;
}

}  // namespace

ConvBackend& HostBackends::get(const std::string& variantId) {
  std::unique_ptr<ConvBackend>& backend = backends_[variantId];
  if (!backend) backend = createConvBackend(variantId);
  return *backend;
}

HostEvaluation::HostEvaluation(const Model& model, HostBackends& backends) : backends_(backends) {
  for (const auto& [name, tensor] : model.weights) {
    values_[name] = &tensor;
    modelWeights_.insert(tensor.data());
  }
}

void HostEvaluation::runStage(const std::string& name, const std::string& kind, const std::function<void()>& work) {
  if (!timeStages_) return work();
  const auto start = std::chrono::steady_clock::now();
  work();
  timedStages_.push_back({name, kind, secondsSince(start)});
}

void HostEvaluation::runOp(const Node& node, const ConvVariant* convVariant) {
  // A conv that is a stage of its own on a variant that fuses: its bias is added in the same pass
  // (ConvOp::run would add it in one more pass over the output).
  if (convVariant && !convVariant->fusableOps.empty()) {
    std::vector<Shape> shapes;
    for (const std::string& name : node.inputs) shapes.push_back(shapeOf(name));
    if (const std::optional<ConvProblem> problem = node.op->convProblem(shapes))
      return runFused(node, node.output, node.op->outputShape(shapes), *problem, *convVariant, ConvEpilogue{});
  }
  if (!convVariant && addHeld(node)) return;
  struct TimedConv final : ConvExecutor {
    ConvBackend* backend = nullptr;
    std::vector<double>* seconds = nullptr;
    void convolve(const ConvProblem& problem, const float* x, const float* w, float* y) override {
      if (!backend) throw Error("internal: a convolution outside a conv stage");
      const auto start = std::chrono::steady_clock::now();
      backend->forward(problem, x, w, y);
      seconds->push_back(secondsSince(start));
    }
  } conv;
  if (convVariant) conv.backend = &backends_.get(convVariant->id);
  conv.seconds = &seconds_;
  store(node.output, node.op->run(inputsOf(node), conv));
}

bool HostEvaluation::addHeld(const Node& node) {
  if (node.opType != "Add" || node.inputs.size() != 2) return false;
  const auto a = held_.find(node.inputs[0]);
  const auto b = held_.find(node.inputs[1]);
  if (a == held_.end() || b == held_.end() || a->second->shape() != b->second->shape()) return false;
  std::unique_ptr<HeldValue> sum = a->second->plus(*b->second);
  if (!sum) return false;
  held_[node.output] = std::move(sum);
  return true;
}

void HostEvaluation::runFused(const Node& node, const std::string& output, const Shape& outputShape,
                              const ConvProblem& problem, const ConvVariant& variant, const ConvEpilogue& epilogue) {
  ConvBackend& backend = backends_.get(variant.id);
  // The input stays in the backend's layout when this backend holds it; other values are NCHW.
  ConvInput input;
  const auto held = held_.find(node.inputs[0]);
  if (held != held_.end() && &held->second->owner() == &backend)
    input.held = held->second.get();
  else
    input.plain = plain(node.inputs[0]).data();
  const Tensor& weights = plain(node.inputs[1]);
  ConvEpilogue withBias = epilogue;
  if (node.inputs.size() > 2) withBias.bias = plain(node.inputs[2]).data();
  withBias.constantWeights = modelWeights_.contains(weights.data());
  Tensor out;
  const auto plainOutput = [&] {
    out = Tensor::uninitialized(outputShape);  // the backend writes every element
    return out.data();
  };
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<HeldValue> heldOut = backend.forwardHeld(problem, input, weights.data(), withBias, plainOutput);
  seconds_.push_back(secondsSince(start));
  if (heldOut) {
    if (heldOut->shape() != outputShape) throw Error("internal: a held conv output of another shape");
    held_[output] = std::move(heldOut);
  } else {
    store(output, std::move(out));
  }
}

void HostEvaluation::runNetwork(const ChainNetwork&, const ConvVariant& variant, int64_t, const std::string&,
                                const std::string&, const Shape&) {
  throw Error("internal: the whole-network variant " + variant.id + " was planned on the CPU");
}

std::vector<double> HostEvaluation::finish(double* uploadSeconds) {
  if (uploadSeconds) *uploadSeconds = 0.0;
  return seconds_;
}

std::vector<const Tensor*> HostEvaluation::inputsOf(const Node& node) {
  std::vector<const Tensor*> in;
  for (const std::string& name : node.inputs) in.push_back(&plain(name));
  return in;
}

const Tensor& HostEvaluation::plain(const std::string& name) {
  if (const auto value = values_.find(name); value != values_.end()) return *value->second;
  const HeldValue& held = *held_.at(name);
  Tensor copy = Tensor::uninitialized(held.shape());
  held.copyTo(copy.data());
  store(name, std::move(copy));
  return *values_.at(name);
}

Shape HostEvaluation::shapeOf(const std::string& name) const {
  if (const auto held = held_.find(name); held != held_.end()) return held->second->shape();
  return values_.at(name)->shape();
}

DeviceEvaluation::DeviceEvaluation(Device& device, const std::map<std::string, DeviceTensor>& weights,
                                   HostBackends& hostBackends)
    : device_(device), hostBackends_(hostBackends), values_(weights) {
  device_.beginRun();
}

void DeviceEvaluation::runStage(const std::string& name, const std::string& kind, const std::function<void()>& work) {
  if (!timeStages_) return work();
  // The same timing points as the conv stages' (Device::timed): they nest, on the one stream.
  stageTimings_.push_back(device_.timed(work));
  timedStages_.push_back({name, kind, 0.0});  // the seconds once finish() has waited
}

void DeviceEvaluation::bindStagedBytes(const ByteImages& images, int outHeight, int outWidth, bool copy) {
  if (copy)
    uploads_.push_back(
        device_.timed([&] { device_.stageImageBytes(images.pixels, images.count, images.height, images.width); }));
  staged_ = device_.stagedImageBytes(images.count, images.height, images.width, outHeight, outWidth);
  stagedHeight_ = images.height;
  stagedWidth_ = images.width;
}

void DeviceEvaluation::runNetwork(const ChainNetwork& network, const ConvVariant& variant, int64_t batch,
                                  const std::string& input, const std::string& output, const Shape& outputShape) {
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

void DeviceEvaluation::runOp(const Node& node, const ConvVariant* convVariant) {
  if (convVariant && !convVariant->runsOnGpu()) return runConvOnHost(node, *convVariant);
  DeviceRun run{
      device_, [&](const ConvProblem& problem, const float* x, const float* w, float* y) {
        if (!convVariant) throw Error("internal: a convolution outside a conv stage");
        timings_.push_back(device_.timed([&] { convVariant->runOnDevice(device_, problem, x, w, y, ConvEpilogue{}); }));
      }};
  values_[node.output] = node.op->runOnDevice(inputsOf(node), run);
}

void DeviceEvaluation::runFused(const Node& node, const std::string& output, const Shape& outputShape,
                                const ConvProblem& problem, const ConvVariant& variant, const ConvEpilogue& epilogue) {
  const std::vector<const DeviceTensor*> in = inputsOf(node);
  DeviceTensor out = device_.allocate(outputShape);
  ConvEpilogue withBias = epilogue;
  if (in.size() > 2) withBias.bias = in[2]->data();
  timings_.push_back(device_.timed(
      [&] { variant.runOnDevice(device_, problem, in[0]->data(), in[1]->data(), out.data(), withBias); }));
  values_[output] = std::move(out);
}

void DeviceEvaluation::runConvOnHost(const Node& node, const ConvVariant& variant) {
  struct HostConv final : ConvExecutor {
    ConvBackend* backend = nullptr;
    void convolve(const ConvProblem& problem, const float* x, const float* w, float* y) override {
      backend->forward(problem, x, w, y);
    }
  } conv;
  conv.backend = &hostBackends_.get(variant.id);
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

Tensor DeviceEvaluation::fetch(const std::string& name) {
  const DeviceTensor& value = values_.at(name);
  Tensor host(value.shape);
  device_.download(value, host.data());
  return host;
}

std::vector<double> DeviceEvaluation::finish(double* uploadSeconds) {
  device_.synchronize();
  std::vector<double> seconds;
  for (int timing : timings_) seconds.push_back(device_.elapsedSeconds(timing));
  if (uploadSeconds) {
    *uploadSeconds = 0.0;
    for (int timing : uploads_) *uploadSeconds += device_.elapsedSeconds(timing);
  }
  for (size_t k = 0; k < stageTimings_.size(); ++k) timedStages_[k].seconds = device_.elapsedSeconds(stageTimings_[k]);
  return seconds;
}

std::vector<const DeviceTensor*> DeviceEvaluation::inputsOf(const Node& node) const {
  std::vector<const DeviceTensor*> in;
  for (const std::string& name : node.inputs) in.push_back(&values_.at(name));
  return in;
}

void runPlan(const Model& model, const Plan& plan, int64_t batch, Evaluation& values,
             std::vector<ConvLayerTime>& stageTimes, std::vector<LayerOutput>* captured) {
  const std::vector<std::string> names = values.timesEveryStage() ? shortLayerNames(model) : std::vector<std::string>{};
  for (const PlanStage& stage : plan.stages) {
    const Node& first = model.nodes[stage.nodes.front()];
    const Node& last = model.nodes[stage.nodes.back()];
    const auto run = [&] {
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
    };
    try {
      if (!values.timesEveryStage() || onlyRenames(model, stage))
        run();
      else
        values.runStage(stageName(model, stage, names), stage.hasConv || stage.wholeNetwork ? "conv" : "layer", run);
    } catch (const Error& e) {
      throw Error(nodeContext(model, first) + e.what());
    }
    if (captured) captured->push_back({last.name, last.opType, values.fetch(last.output), last.op->description().role});
    for (const std::string& name : stage.lastReadHere) values.release(name);
  }
}

std::map<std::string, Tensor> finishPlan(const Model& model, Evaluation& values, std::vector<ConvLayerTime>& stageTimes,
                                         std::vector<ConvLayerTime>* convTimes, double* uploadSeconds) {
  std::map<std::string, Tensor> outputs;
  for (const ValueInfo& output : model.outputs) {
    if (!values.holds(output.name)) throw Error(model.sourcePath + ": output '" + output.name + "' was not computed");
    outputs[output.name] = values.fetch(output.name);
  }
  const std::vector<double> seconds = values.finish(uploadSeconds);
  if (seconds.size() != stageTimes.size()) throw Error("internal: conv stages and their timings disagree");
  for (size_t k = 0; k < seconds.size(); ++k) stageTimes[k].seconds = seconds[k];
  if (convTimes) convTimes->insert(convTimes->end(), stageTimes.begin(), stageTimes.end());
  return outputs;
}

}  // namespace convscope
