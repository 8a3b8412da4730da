#include "app/core/engine/conv_pixel.h"

#include "app/core/util/error.h"

namespace convscope {
namespace {

const Tensor& weightOf(const Model& model, const Node& conv, size_t input, const char* what) {
  const auto it = model.weights.find(conv.inputs.at(input));
  if (it == model.weights.end())
    throw Error("Conv node " + conv.name + ": its " + what + " '" + conv.inputs[input] +
                "' is computed at run time, not stored in the model; the arithmetic view needs stored weights");
  return it->second;
}

}  // namespace

std::vector<int> convNodeIndices(const Model& model) {
  std::vector<int> indices;
  for (size_t i = 0; i < model.nodes.size(); ++i)
    if (model.nodes[i].op->description().role == LayerRole::Convolution) indices.push_back(static_cast<int>(i));
  return indices;
}

std::vector<ConvProblem> modelConvProblems(const Model& model) {
  const std::map<std::string, Shape> shapes = model.inferShapes(model.inputShapesFor(1));
  std::vector<ConvProblem> problems;
  for (const int index : convNodeIndices(model)) {
    const Node& conv = model.nodes[static_cast<size_t>(index)];
    const auto input = shapes.find(conv.inputs.at(0));
    if (input == shapes.end()) throw Error("Conv node " + conv.name + ": the shape of its input is not known");
    problems.push_back(convProblemOf(model, conv, input->second));
  }
  return problems;
}

ConvProblem convProblemOf(const Model& model, const Node& conv, const Shape& inputShape) {
  if (conv.op->description().role != LayerRole::Convolution || conv.inputs.size() < 2)
    throw Error("node " + conv.name + " is not a Conv");
  std::vector<Shape> shapes = {inputShape, weightOf(model, conv, 1, "weights").shape()};
  if (conv.inputs.size() > 2) shapes.push_back(weightOf(model, conv, 2, "bias").shape());
  const std::optional<ConvProblem> problem = conv.op->convProblem(shapes);
  if (!problem) throw Error("node " + conv.name + " is not a convolution");
  return *problem;
}

const Tensor* capturedInputOf(const Model& model, const Node& conv, const std::vector<LayerOutput>& layers) {
  if (conv.inputs.empty() || layers.empty()) return nullptr;
  const std::string& value = conv.inputs[0];
  for (const ValueInfo& input : model.inputs)
    if (input.name == value) return layers.front().node == "input" ? &layers.front().value : nullptr;
  for (const Node& node : model.nodes) {
    if (node.output != value) continue;
    for (const LayerOutput& layer : layers)
      if (layer.node == node.name) return &layer.value;
    return nullptr;
  }
  return nullptr;
}

ConvPixelBreakdown explainConvPixel(const Model& model, const Node& conv, const Tensor& input, int outChannel, int y,
                                    int x) {
  ConvPixelBreakdown b;
  b.node = conv.name;
  b.problem = convProblemOf(model, conv, input.shape());
  const ConvProblem& p = b.problem;
  if (outChannel < 0 || outChannel >= p.outChannels || y < 0 || y >= p.outHeight() || x < 0 || x >= p.outWidth())
    throw Error("Conv node " + conv.name + ": output pixel (channel " + std::to_string(outChannel) + ", y " +
                std::to_string(y) + ", x " + std::to_string(x) + ") is outside its " + std::to_string(p.outChannels) +
                " x " + std::to_string(p.outHeight()) + " x " + std::to_string(p.outWidth()) + " output");
  b.outChannel = outChannel;
  b.y = y;
  b.x = x;
  const Tensor& weights = weightOf(model, conv, 1, "weights");
  const int terms = p.inChannels * p.kernelHeight * p.kernelWidth;
  b.inputs.assign(static_cast<size_t>(terms), 0.0);
  b.padding.assign(static_cast<size_t>(terms), false);
  b.weights.assign(static_cast<size_t>(terms), 0.0);
  b.products.assign(static_cast<size_t>(terms), 0.0);
  b.channelSums.assign(static_cast<size_t>(p.inChannels), 0.0);
  const float* image = input.data();  // image 0 of the batch
  const float* filter = weights.data() + int64_t{outChannel} * terms;
  for (int c = 0; c < p.inChannels; ++c)
    for (int ky = 0; ky < p.kernelHeight; ++ky)
      for (int kx = 0; kx < p.kernelWidth; ++kx) {
        const int t = b.termIndex(c, ky, kx);
        const int row = b.inputRow(ky), column = b.inputColumn(kx);
        const bool inside = row >= 0 && row < p.inHeight && column >= 0 && column < p.inWidth;
        b.padding[static_cast<size_t>(t)] = !inside;
        const double value = inside ? image[(int64_t{c} * p.inHeight + row) * p.inWidth + column] : 0.0;
        b.inputs[static_cast<size_t>(t)] = value;
        b.weights[static_cast<size_t>(t)] = filter[t];
        b.products[static_cast<size_t>(t)] = value * filter[t];
        b.channelSums[static_cast<size_t>(c)] += value * filter[t];
      }
  for (double sum : b.channelSums) b.productSum += sum;
  if (conv.inputs.size() > 2) {
    b.hasBias = true;
    b.bias = weightOf(model, conv, 2, "bias")[outChannel];
  }
  return b;
}

}  // namespace convscope
