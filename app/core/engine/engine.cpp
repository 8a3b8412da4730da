#include "engine/engine.h"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <set>

#include "conv/conv_registry.h"
#include "gpu_runtime.h"
#include "util/error.h"

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
  for (const auto& [name, tensor] : model_->weights) deviceWeights_[name] = device_->upload(tensor.data(), tensor.shape());
  device_->synchronize();
}

std::string Engine::deviceName() const { return device_ ? device_->name() : "CPU"; }

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

}  // namespace

std::map<std::string, Tensor> Engine::evaluate(const std::map<std::string, Tensor>& inputs,
                                               std::vector<ConvLayerTime>* convTimes,
                                               std::vector<LayerOutput>* captured) {
  InputRefs refs;
  for (const auto& [name, tensor] : inputs) refs[name] = &tensor;
  return evaluate(refs, convTimes, captured, nullptr);
}

std::map<std::string, Tensor> Engine::evaluate(const InputRefs& inputs,
                                               std::vector<ConvLayerTime>* convTimes,
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

std::map<std::string, Tensor> Engine::evaluateOnDevice(const InputRefs& inputs,
                                                       std::vector<ConvLayerTime>* convTimes,
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
                  if (convTimes) convTimes->push_back({currentNode, problem, 0.0, record.variant, record.fallbackReason});
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
  InferenceResult result;
  if (captureLayers) result.layers.push_back({"input", "Input", images});
  std::map<std::string, Tensor> outputs = evaluate(InputRefs{{input.name, &images}}, &result.convTimes,
                                                   captureLayers ? &result.layers : nullptr, &result.uploadSeconds);
  Tensor out = std::move(outputs.begin()->second);
  if (out.rank() != 2 || out.dim(0) != images.dim(0))
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
