#include "app/core/engine/class_evidence.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "app/core/util/error.h"

namespace convscope {
namespace {

// The nodes that read `value`.
std::vector<const Node*> readersOf(const Model& model, const std::string& value) {
  std::vector<const Node*> readers;
  for (const Node& node : model.nodes)
    if (std::find(node.inputs.begin(), node.inputs.end(), value) != node.inputs.end()) readers.push_back(&node);
  return readers;
}

bool isGraphOutput(const Model& model, const std::string& value) {
  return std::any_of(model.outputs.begin(), model.outputs.end(),
                     [&](const ValueInfo& output) { return output.name == value; });
}

std::string describe(const Node& node) {
  return node.opType + " '" + node.name + "'";
}

// The one node that reads `value`, or null with `whyNot` set.
const Node* onlyReader(const Model& model, const std::string& value, const std::string& what, std::string& whyNot) {
  const std::vector<const Node*> readers = readersOf(model, value);
  if (readers.size() != 1) {
    whyNot =
        what + (readers.empty() ? " is read by no node" : " is read by " + std::to_string(readers.size()) + " nodes");
    return nullptr;
  }
  return readers.front();
}

std::optional<ActivationMapHead> findHead(const Model& model, std::string& whyNot) {
  const Node* pool = nullptr;
  for (const Node& node : model.nodes)
    if (node.op->description().kind == "global-avg-pool") pool = &node;  // the last one
  if (!pool) {
    whyNot = "the model has no global average pooling before its classifier";
    return std::nullopt;
  }
  ActivationMapHead head;
  head.poolNode = pool->name;
  const auto producer = std::find_if(model.nodes.begin(), model.nodes.end(),
                                     [&](const Node& node) { return node.output == pool->inputs.front(); });
  if (producer == model.nodes.end()) {
    whyNot = describe(*pool) + " pools the model's input, not feature maps";
    return std::nullopt;
  }
  head.featureNode = producer->name;

  // Pooling, then only steps that keep the values (Flatten, Reshape, Identity), then the dense layer.
  std::string value = pool->output;
  const Node* node = onlyReader(model, value, "the pooled value of " + describe(*pool), whyNot);
  while (node && (node->op->description().role == LayerRole::Flattening ||
                  node->op->description().role == LayerRole::PassThrough)) {
    value = node->output;
    node = onlyReader(model, value, "the output of " + describe(*node), whyNot);
  }
  if (!node) return std::nullopt;
  if (node->op->description().role != LayerRole::Dense) {
    whyNot = "the pooled values go through " + describe(*node) + " before any linear classifier";
    return std::nullopt;
  }
  const std::map<std::string, Shape> shapes = model.inferShapes(model.inputShapesFor(1));
  std::vector<Shape> inputShapes;
  for (const std::string& input : node->inputs) inputShapes.push_back(shapes.at(input));
  const std::optional<DenseStep> step = node->op->asDenseStep(inputShapes);
  if (!step || node->inputs.front() != value || !model.weights.count(node->inputs[1]) ||
      (step->hasBias && !model.weights.count(node->inputs[2]))) {
    whyNot = describe(*node) + " is not one linear layer with stored weights (a Gemm of the pooled values)";
    return std::nullopt;
  }
  head.denseNode = node->name;
  head.weights = node->inputs[1];
  head.bias = step->hasBias ? node->inputs[2] : "";
  head.weightsTransposed = step->weightsTransposed;
  head.features = step->inputs;
  head.classes = step->outputs;
  const Shape& features = shapes.at(pool->inputs.front());
  if (features.size() != 4 || features[1] != head.features) {
    whyNot = "the pooled maps " + shapeToString(features) + " are not the " + std::to_string(head.features) +
             " inputs of " + describe(*node);
    return std::nullopt;
  }

  // After the logits, at most a softmax: its order of classes is theirs.
  value = node->output;
  while (!isGraphOutput(model, value)) {
    node = onlyReader(model, value, "the logits of " + head.denseNode, whyNot);
    if (!node) return std::nullopt;
    const LayerRole role = node->op->description().role;
    if (role != LayerRole::Softmax && role != LayerRole::PassThrough && role != LayerRole::Flattening) {
      whyNot = "the logits go through " + describe(*node) + " after the classifier";
      return std::nullopt;
    }
    value = node->output;
  }
  return head;
}

}  // namespace

std::optional<ActivationMapHead> findActivationMapHead(const Model& model, std::string* whyNot) {
  std::string reason;
  std::optional<ActivationMapHead> head = findHead(model, reason);
  if (whyNot) *whyNot = reason;
  return head;
}

const Tensor& headFeatures(const ActivationMapHead& head, const std::vector<LayerOutput>& layers) {
  for (const LayerOutput& layer : layers)
    if (layer.node == head.featureNode) return layer.value;
  throw Error("the inference did not keep the output of '" + head.featureNode +
              "' (the maps the class activation map weighs): run it with every layer captured");
}

ActivationMap classActivationMap(const Model& model, const ActivationMapHead& head, const Tensor& features, int image,
                                 int classIndex) {
  if (features.rank() != 4 || features.dim(1) != head.features)
    throw Error("the features " + shapeToString(features.shape()) + " are not the " + std::to_string(head.features) +
                " maps that '" + head.denseNode + "' weighs");
  if (image < 0 || image >= features.dim(0))
    throw Error("image " + std::to_string(image) + " is not in a batch of " + std::to_string(features.dim(0)));
  if (classIndex < 0 || classIndex >= head.classes)
    throw Error("class " + std::to_string(classIndex) + " is not one of the model's " + std::to_string(head.classes) +
                " classes (0 to " + std::to_string(head.classes - 1) + ")");
  const Tensor& weights = model.weights.at(head.weights);
  ActivationMap map;
  map.classIndex = classIndex;
  map.height = static_cast<int>(features.dim(2));
  map.width = static_cast<int>(features.dim(3));
  const size_t plane = static_cast<size_t>(map.height) * map.width;
  const float* maps = features.data() + static_cast<size_t>(image) * head.features * plane;
  std::vector<double> sums(plane, 0.0);
  for (int64_t k = 0; k < head.features; ++k) {
    const double w = head.weightsTransposed ? weights.data()[classIndex * head.features + k]
                                            : weights.data()[k * head.classes + classIndex];
    const float* mapK = maps + static_cast<size_t>(k) * plane;
    for (size_t i = 0; i < plane; ++i) sums[i] += w * mapK[i];
  }
  map.values.assign(sums.begin(), sums.end());
  double mean = 0.0;
  for (double s : sums) mean += s;
  mean /= static_cast<double>(plane);
  map.logit = mean + (head.bias.empty() ? 0.0 : model.weights.at(head.bias).data()[classIndex]);
  return map;
}

int defaultPatch(int height, int width) {
  return std::max(1, std::min(height, width) / 7);
}

std::vector<int> patchStarts(int size, int patch, int stride) {
  if (patch < 1 || patch > size)
    throw Error("a patch of " + std::to_string(patch) + " pixels does not fit a side of " + std::to_string(size) +
                " (1 to " + std::to_string(size) + ")");
  if (stride < 1) throw Error("the patch's stride is " + std::to_string(stride) + "; it must be at least 1");
  std::vector<int> starts;
  for (int start = 0; start + patch < size; start += stride) starts.push_back(start);
  starts.push_back(size - patch);  // the last patch reaches the edge
  return starts;
}

OcclusionMap occlusionSensitivity(Engine& engine, const Tensor& input, const OcclusionRequest& request,
                                  const std::function<bool(int, int)>& progress) {
  const Model& model = engine.model();
  const int channels = model.inputChannels(), height = model.inputHeight(), width = model.inputWidth();
  if (input.shape() != Shape{1, channels, height, width})
    throw Error("the occluded picture is " + shapeToString(input.shape()) + ", not the model's input [1x" +
                std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width) + "]");
  OcclusionMap map;
  map.height = height;
  map.width = width;
  map.patch = request.patch > 0 ? request.patch : defaultPatch(height, width);
  map.stride = request.stride > 0 ? request.stride : std::max(1, map.patch / 2);
  if (request.patch < 0 || request.stride < 0)
    throw Error("the patch (" + std::to_string(request.patch) + ") and its stride (" + std::to_string(request.stride) +
                ") must be positive, or 0 for their defaults");
  map.rowStarts = patchStarts(height, map.patch, map.stride);
  map.columnStarts = patchStarts(width, map.patch, map.stride);
  map.deviceName = engine.deviceName();

  const InferenceResult unoccluded = engine.infer(input);
  const int classes = static_cast<int>(unoccluded.probabilities.dim(1));
  const float* base = unoccluded.probabilities.data();
  map.classIndex =
      request.classIndex >= 0 ? request.classIndex : static_cast<int>(std::max_element(base, base + classes) - base);
  if (map.classIndex >= classes)
    throw Error("class " + std::to_string(map.classIndex) + " is not one of the model's " + std::to_string(classes) +
                " classes (0 to " + std::to_string(classes - 1) + ")");
  map.baseline = base[map.classIndex];

  std::array<float, 3> fill{};
  for (int c = 0; c < channels; ++c)
    fill[c] = request.fill ? (*request.fill)[c] : engine.preprocessing().scaled(0.5f, c);

  const int rows = static_cast<int>(map.rowStarts.size()), columns = static_cast<int>(map.columnStarts.size());
  const int total = rows * columns;
  map.drop.assign(static_cast<size_t>(total), std::numeric_limits<float>::quiet_NaN());
  // On the GPU as many as memory allows (usually all of them: one launch sequence). On the CPU
  // batches of about kCpuBatchFlops (a second or two on a laptop's cores), at least 16 pictures,
  // so that progress and cancel come often for a large network and a small one runs in one batch.
  constexpr double kCpuBatchFlops = 2e9;
  int fits = request.batch > 0 ? request.batch : std::max(1, engine.largestBatchThatFits());
  if (request.batch <= 0 && !engine.device()) {
    int64_t flops = 0;
    for (const LayerInfo& layer : model.layers()) flops += layer.flops;
    fits = std::min(fits, static_cast<int>(std::clamp(kCpuBatchFlops / std::max<int64_t>(flops, 1), 16.0, 1e6)));
  }
  const size_t picture = static_cast<size_t>(channels) * height * width;
  for (int first = 0; first < total;) {
    const int count = std::min(fits, total - first);
    Tensor batch({count, channels, height, width});
    for (int i = 0; i < count; ++i) {
      float* occluded = batch.data() + i * picture;
      std::copy_n(input.data(), picture, occluded);
      const int top = map.rowStarts[static_cast<size_t>((first + i) / columns)];
      const int left = map.columnStarts[static_cast<size_t>((first + i) % columns)];
      for (int c = 0; c < channels; ++c)
        for (int y = top; y < top + map.patch; ++y)
          std::fill_n(occluded + (static_cast<size_t>(c) * height + y) * width + left, map.patch, fill[c]);
    }
    const auto started = std::chrono::steady_clock::now();
    const InferenceResult result = engine.infer(batch);
    map.inferenceSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (int i = 0; i < count; ++i)
      map.drop[static_cast<size_t>(first + i)] =
          map.baseline - result.probabilities.data()[i * classes + map.classIndex];
    map.batches.push_back(count);
    map.pictures += count;
    first += count;
    if (progress && !progress(first, total)) {
      map.cancelled = first < total;
      break;
    }
  }

  // Each pixel: the mean drop of the patches that cover it (those that ran).
  std::vector<double> sum(static_cast<size_t>(height) * width, 0.0);
  std::vector<int> covering(sum.size(), 0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < columns; ++c) {
      const float drop = map.dropAt(static_cast<size_t>(r), static_cast<size_t>(c));
      if (std::isnan(drop)) continue;
      for (int y = map.rowStarts[r]; y < map.rowStarts[r] + map.patch; ++y)
        for (int x = map.columnStarts[c]; x < map.columnStarts[c] + map.patch; ++x) {
          sum[static_cast<size_t>(y) * width + x] += drop;
          ++covering[static_cast<size_t>(y) * width + x];
        }
    }
  map.pixelDrop.resize(sum.size());
  for (size_t i = 0; i < sum.size(); ++i)
    map.pixelDrop[i] = covering[i] ? static_cast<float>(sum[i] / covering[i]) : std::numeric_limits<float>::quiet_NaN();
  return map;
}

std::string describeOcclusionRun(const OcclusionMap& map) {
  std::ostringstream out;
  out << map.pictures << (map.pictures == 1 ? " picture" : " pictures") << " in " << map.batches.size()
      << (map.batches.size() == 1 ? " batch" : " batches");
  if (map.batches.size() == 1) {
    out << " of " << map.batches.front();
  } else if (!map.batches.empty()) {
    out << " (";
    for (size_t i = 0; i < map.batches.size() && i < 4; ++i) out << (i ? ", " : "") << map.batches[i];
    if (map.batches.size() > 4) out << ", ...";
    out << ")";
  }
  out.setf(std::ios::fixed);
  out.precision(map.inferenceSeconds < 1.0 ? 1 : 2);
  if (map.inferenceSeconds < 1.0)
    out << " in " << map.inferenceSeconds * 1e3 << " ms";
  else
    out << " in " << map.inferenceSeconds << " s";
  out << " on " << map.deviceName;
  if (map.cancelled) out << " (cancelled)";
  return out.str();
}

}  // namespace convscope
