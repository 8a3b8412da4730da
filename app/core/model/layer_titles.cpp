#include "app/core/model/layer_titles.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "app/core/util/tensor.h"

namespace convscope {
namespace {

// A shape of one image without its batch dimension, as "12×42×42" (UTF-8 multiplication sign).
std::string imageShape(const Shape& shape) {
  std::string text;
  for (size_t d = shape.size() > 1 ? 1 : 0; d < shape.size(); ++d) {
    if (!text.empty()) text += "×";
    text += std::to_string(shape[d]);
  }
  return text.empty() ? "1" : text;
}

// The number of values one image has in `shape` (the batch dimension left out).
int64_t valuesPerImage(const Shape& shape) {
  int64_t count = 1;
  for (size_t d = shape.size() > 1 ? 1 : 0; d < shape.size(); ++d) count *= shape[d];
  return count;
}

}  // namespace

std::string layerKind(const std::string& opType) {
  static const std::map<std::string, std::string> kinds = {{"Conv", "conv"},
                                                           {"Gemm", "dense"},
                                                           {"MatMul", "dense"},
                                                           {"MaxPool", "max-pool"},
                                                           {"AveragePool", "avg-pool"},
                                                           {"Relu", "relu"},
                                                           {"Tanh", "tanh"},
                                                           {"Sigmoid", "sigmoid"},
                                                           {"Softmax", "softmax"},
                                                           {"Flatten", "flatten"},
                                                           {"Reshape", "reshape"},
                                                           {"Add", "add"},
                                                           {"Identity", "identity"},
                                                           {"Constant", "constant"},
                                                           // The layers of students' CNNs beyond the course's.
                                                           {"BatchNormalization", "batch-norm"},
                                                           {"LeakyRelu", "leaky-relu"},
                                                           {"Elu", "elu"},
                                                           {"Gelu", "gelu"},
                                                           {"Erf", "erf"},
                                                           {"Sub", "sub"},
                                                           {"Mul", "mul"},
                                                           {"Div", "div"},
                                                           {"Pow", "pow"},
                                                           {"Dropout", "dropout"},
                                                           {"GlobalAveragePool", "global-avg-pool"},
                                                           {"ReduceMean", "mean"},
                                                           {"Concat", "concat"},
                                                           {"Resize", "resize"},
                                                           {"Upsample", "upsample"}};
  if (const auto it = kinds.find(opType); it != kinds.end()) return it->second;
  std::string lower = opType;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

std::vector<std::string> layerTitles(const Model& model) {
  std::map<std::string, Shape> inputShapes;
  for (const ValueInfo& input : model.inputs) {
    Shape shape = input.shape;
    for (int64_t& d : shape)
      if (d < 0) d = 1;  // one image
    inputShapes[input.name] = shape;
  }
  const std::map<std::string, Shape> shapes = model.inferShapes(inputShapes);

  std::map<std::string, int> numberOfKind;
  std::vector<std::string> titles;
  titles.reserve(model.nodes.size());
  for (const Node& node : model.nodes) {
    const std::string kind = layerKind(node.opType);
    std::string title = kind + " " + std::to_string(++numberOfKind[kind]);
    const Shape& out = shapes.at(node.output);
    const Shape* in = node.inputs.empty() ? nullptr : &shapes.at(node.inputs.front());
    if (node.opType == "Conv" && node.inputs.size() >= 2) {
      const Shape& w = shapes.at(node.inputs[1]);  // filters x channels x kernel height x kernel width
      title += " · " + std::to_string(w[0]) + (w[0] == 1 ? " filter " : " filters ") + std::to_string(w[2]) + "×" +
               std::to_string(w[3]);
      // What makes it other than the course's convolution: spaced taps, channels in groups.
      std::vector<Shape> in;
      for (const std::string& name : node.inputs) in.push_back(shapes.at(name));
      if (const std::optional<ConvProblem> p = node.op->convProblem(in)) {
        if (p->hasDilation())
          title += ", dilation " + (p->dilationHeight == p->dilationWidth
                                        ? std::to_string(p->dilationHeight)
                                        : std::to_string(p->dilationHeight) + "×" + std::to_string(p->dilationWidth));
        if (p->isGrouped())
          title += p->group == p->inChannels ? ", depthwise" : ", " + std::to_string(p->group) + " groups";
      }
      title += " → " + imageShape(out);
    } else if (node.opType == "Gemm" && in && in->size() == 2 && out.size() == 2 && out[0] > 0) {
      // A is M x K, or K x M with transA: either way K values for each of the M images of the output.
      title += " · " + std::to_string(elementCount(*in) / out[0]) + " → " + std::to_string(out[1]);
    } else if ((node.opType == "Gemm" || node.opType == "MatMul") && in) {
      title += " · " + std::to_string(valuesPerImage(*in)) + " → " + std::to_string(valuesPerImage(out));
    } else if (node.opType == "Concat" && node.inputs.size() > 1) {
      title += " · " + std::to_string(node.inputs.size()) + " inputs → " + imageShape(out);
    } else if (in && (node.opType == "MaxPool" || node.opType == "AveragePool" || node.opType == "Flatten" ||
                      node.opType == "Reshape" || node.opType == "GlobalAveragePool" || node.opType == "ReduceMean" ||
                      node.opType == "Resize" || node.opType == "Upsample")) {
      title += " · " + imageShape(*in) + " → " + imageShape(out);
    } else {
      title += " → " + imageShape(out);
    }
    titles.push_back(std::move(title));
  }
  return titles;
}

}  // namespace convscope
