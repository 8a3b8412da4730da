#include "app/core/model/layer_titles.h"

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
  return describeOperator(opType).kind;
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
    const LayerDescription& layer = node.op->description();
    const std::string& kind = layer.kind;
    std::string title = kind + " " + std::to_string(++numberOfKind[kind]);
    const Shape& out = shapes.at(node.output);
    const Shape* in = node.inputs.empty() ? nullptr : &shapes.at(node.inputs.front());
    if (layer.role == LayerRole::Convolution && node.inputs.size() >= 2) {
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
        else if (w[2] == 1 && w[3] == 1)
          title += ", pointwise";  // each output a weighted sum of the channels at one position
      }
      title += " → " + imageShape(out);
    } else if (layer.role == LayerRole::Dense && in && in->size() == 2 && out.size() == 2 && out[0] > 0) {
      // A is M x K, or K x M with Gemm's transA: either way K values for each of the M images of
      // the output (a 2-D MatMul's A is M x K).
      title += " · " + std::to_string(elementCount(*in) / out[0]) + " → " + std::to_string(out[1]);
    } else if (layer.role == LayerRole::Dense && in) {
      title += " · " + std::to_string(valuesPerImage(*in)) + " → " + std::to_string(valuesPerImage(out));
    } else if (layer.role == LayerRole::Concatenation && node.inputs.size() > 1) {
      title += " · " + std::to_string(node.inputs.size()) + " inputs → " + imageShape(out);
    } else if (in && (layer.role == LayerRole::WindowPooling || layer.role == LayerRole::Reshaping ||
                      layer.role == LayerRole::Flattening)) {
      title += " · " + imageShape(*in) + " → " + imageShape(out);
    } else {
      title += " → " + imageShape(out);
    }
    titles.push_back(std::move(title));
  }
  return titles;
}

}  // namespace convscope
