#include "app/core/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "app/core/conv/conv_registry.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/memory_limit.h"
#include "gpu/gpu_runtime.h"

namespace convscope {

// Routes each Conv to the selected backend, or to cpu-reference where the backend declines the
// shape, and records the time of every call.
class Engine::TimedConv final : public ConvExecutor {
 public:
  TimedConv(std::string variant) : variant_(std::move(variant)), backend_(createConvBackend(variant_)) {}

  void convolve(const ConvProblem& problem, const float* input, const float* weights, float* output) override {
    ConvLayerTime record{currentNode, problem, 0.0, variant_, backend_->unsupportedReason(problem)};
    ConvBackend* backend = backend_.get();
    if (!record.fallbackReason.empty()) {
      if (!fallback_) fallback_ = createConvBackend("cpu-reference");
      backend = fallback_.get();
      record.variant = "cpu-reference";
    }
    const auto start = std::chrono::steady_clock::now();
    backend->forward(problem, input, weights, output);
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (times) times->push_back(std::move(record));
  }

  // What the backend that will run `problem` allocates for it.
  int64_t workspaceBytes(const ConvProblem& problem) const {
    return backend_->unsupportedReason(problem).empty() ? backend_->workspaceBytes(problem) : 0;
  }

  std::string currentNode;
  std::vector<ConvLayerTime>* times = nullptr;

 private:
  std::string variant_;
  std::unique_ptr<ConvBackend> backend_;
  std::unique_ptr<ConvBackend> fallback_;
};

Engine::Engine(std::shared_ptr<const Model> model, const std::string& variantId)
    : model_(std::move(model)), variantId_(variantId) {
  const ConvVariant& variant = findConvVariant(variantId);
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    throw Error("kernel variant '" + variantId + "' cannot run here: " + reason);
  if (!variant.runsOnGpu) {
    conv_ = std::make_unique<TimedConv>(variantId);
    return;
  }
  device_ = gpu::createCudaDevice();
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

// The model's input shapes with the free (batch) dimension set to `batch`.
std::map<std::string, Shape> batchShapes(const Model& model, int64_t batch) {
  std::map<std::string, Shape> shapes;
  for (const ValueInfo& input : model.inputs) {
    Shape shape = input.shape;
    for (int64_t& d : shape)
      if (d < 0) d = batch;
    shapes[input.name] = shape;
  }
  return shapes;
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
  std::set<std::string> produced;
  MemoryEstimate peak;
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const Node& node = model.nodes[i];
    std::vector<Shape> in;
    for (const std::string& name : node.inputs) in.push_back(shapes.at(name));
    const int64_t out = bytesOf(shapes.at(node.output));
    int64_t workspace = 0;
    if (conv_)
      if (const std::optional<ConvProblem> problem = node.op->convProblem(in))
        workspace = conv_->workspaceBytes(*problem);
    // While the node runs: what is alive, its output, its workspace, and a captured copy.
    const int64_t kept = captureLayers ? saturatingMul(out, 2) : out;
    const int64_t now = saturatingAdd(saturatingAdd(live, kept), workspace);
    if (now > peak.bytes) peak = {now, node.name, node.opType, workspace};
    if (now > limit) return peak;  // the layer where a run would fail
    live = saturatingAdd(live, kept);
    produced.insert(node.output);
    for (const std::string& name : node.inputs)
      if (lastUse.at(name) == i && produced.erase(name)) live -= bytesOf(shapes.at(name));
  }
  // The outputs are copied out of the engine at the end.
  int64_t atEnd = live;
  for (const ValueInfo& output : model.outputs) atEnd = saturatingAdd(atEnd, bytesOf(shapes.at(output.name)));
  if (atEnd > peak.bytes && !model.nodes.empty()) peak = {atEnd, model.nodes.back().name, model.nodes.back().opType, 0};
  return peak;
}

MemoryEstimate Engine::estimateMemory(int64_t batch, bool captureLayers) const {
  return estimateFor(batchShapes(*model_, batch), captureLayers);
}

int Engine::largestBatchThatFits(bool captureLayers) const {
  const int64_t limit = memoryLimit().bytes;
  const auto fits = [&](int64_t batch) {
    try {
      return estimateFor(batchShapes(*model_, batch), captureLayers, limit).bytes <= limit;
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
  checkMemoryFor(batchShapes(*model_, batch), batch, captureLayers);
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

std::map<std::string, Tensor> Engine::evaluate(const InputRefs& inputs, std::vector<ConvLayerTime>* convTimes,
                                               std::vector<LayerOutput>* captured, double* uploadSeconds) {
  const Model& model = *model_;
  checkInputs(model, inputs);
  if (device_) return evaluateOnDevice(inputs, convTimes, captured, uploadSeconds);
  std::map<std::string, const Tensor*> values;
  for (const auto& [name, tensor] : model.weights) values[name] = &tensor;
  for (const ValueInfo& input : model.inputs) values[input.name] = inputs.at(input.name);
  const std::map<std::string, size_t> lastUse = lastUses(model);
  std::map<std::string, Tensor> produced;

  conv_->times = convTimes;
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const Node& node = model.nodes[i];
    std::vector<const Tensor*> in;
    for (const std::string& name : node.inputs) in.push_back(values.at(name));
    conv_->currentNode = node.name;
    try {
      produced[node.output] = node.op->run(in, *conv_);
    } catch (const Error& e) {
      throw Error(nodeContext(model, node) + e.what());
    }
    values[node.output] = &produced[node.output];
    if (captured) captured->push_back({node.name, node.opType, produced[node.output]});
    for (const std::string& name : node.inputs)
      if (lastUse.at(name) == i && produced.count(name)) {
        values.erase(name);
        produced.erase(name);
      }
  }
  conv_->times = nullptr;

  std::map<std::string, Tensor> outputs;
  for (const ValueInfo& output : model.outputs) {
    const auto it = values.find(output.name);
    if (it == values.end()) throw Error(model.sourcePath + ": output '" + output.name + "' was not computed");
    outputs[output.name] = *it->second;
  }
  return outputs;
}

std::map<std::string, Tensor> Engine::evaluateOnDevice(const InputRefs& inputs, std::vector<ConvLayerTime>* convTimes,
                                                       std::vector<LayerOutput>* captured, double* uploadSeconds) {
  const Model& model = *model_;
  Device& device = *device_;
  device.beginRun();
  std::map<std::string, DeviceTensor> values = deviceWeights_;
  for (const ValueInfo& input : model.inputs) {
    const Tensor& host = *inputs.at(input.name);
    values[input.name] = device.upload(host.data(), host.shape());
  }
  const std::map<std::string, size_t> lastUse = lastUses(model);

  std::string currentNode;
  std::vector<int> timings;
  DeviceRun run{device, [&](const ConvProblem& problem, const float* x, const float* w, float* y) {
                  const DeviceConvRecord record = device.convolve(variantId_, problem, x, w, y);
                  timings.push_back(record.timing);
                  if (convTimes)
                    convTimes->push_back({currentNode, problem, 0.0, record.variant, record.fallbackReason});
                }};
  const auto download = [&](const DeviceTensor& value) {
    Tensor host(value.shape);
    device.download(value, host.data());
    return host;
  };
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const Node& node = model.nodes[i];
    std::vector<const DeviceTensor*> in;
    for (const std::string& name : node.inputs) in.push_back(&values.at(name));
    currentNode = node.name;
    try {
      values[node.output] = node.op->runOnDevice(in, run);
    } catch (const Error& e) {
      throw Error(nodeContext(model, node) + e.what());
    }
    if (captured) captured->push_back({node.name, node.opType, download(values[node.output])});
    for (const std::string& name : node.inputs)
      if (lastUse.at(name) == i) values.erase(name);  // weights stay alive in deviceWeights_
  }

  std::map<std::string, Tensor> outputs;
  for (const ValueInfo& output : model.outputs) outputs[output.name] = download(values.at(output.name));
  device.synchronize();
  if (convTimes)
    for (size_t l = 0; l < timings.size(); ++l)
      (*convTimes)[convTimes->size() - timings.size() + l].seconds = device.elapsedSeconds(timings[l]);
  if (uploadSeconds) *uploadSeconds = device.lastUploadSeconds();
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
  Tensor out = std::move(outputs.begin()->second);
  if (out.rank() != 2 || out.dim(0) != images.dim(0) || out.dim(1) < 1)
    throw Error(model_->sourcePath + ": the output has shape " + shapeToString(out.shape()) +
                "; a classifier gives one row of class scores per image");
  result.probabilities = model_->endsWithSoftmax() ? std::move(out) : softmaxRows(out);
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
