#include "app/core/model/model.h"

#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

// Free dimensions (-1) become 1: one image.
Shape concrete(Shape shape) {
  for (int64_t& d : shape)
    if (d < 0) d = 1;
  return shape;
}

}  // namespace

std::map<std::string, Shape> Model::inputShapesFor(int64_t batch) const {
  std::map<std::string, Shape> shapes;
  for (const ValueInfo& input : inputs) {
    Shape shape = input.shape;
    for (int64_t& d : shape)
      if (d < 0) d = batch;
    shapes[input.name] = shape;
  }
  return shapes;
}

std::map<std::string, Shape> Model::inferShapes(const std::map<std::string, Shape>& inputShapes) const {
  std::map<std::string, Shape> shapes = inputShapes;
  for (const auto& [name, tensor] : weights) shapes[name] = tensor.shape();
  for (const Node& node : nodes) {
    const std::string where = sourcePath + ": node '" + node.name + "' (" + node.opType + "): ";
    std::vector<Shape> in;
    for (const std::string& name : node.inputs) {
      const auto it = shapes.find(name);
      if (it == shapes.end()) throw Error(where + "input '" + name + "' has no value");
      in.push_back(it->second);
    }
    Shape out;
    try {
      out = node.op->outputShape(in);
      // Element counts must fit in 64 bits everywhere. Shape-only operators may pass empty tensors
      // along (ONNX allows them); the ones that compute through BLAS or the conv backends refuse them.
      const bool computes = node.op->refusesEmptyTensors();
      for (size_t i = 0; i < in.size(); ++i)
        if (elementCount(in[i]) == 0 && computes)
          throw Error("input '" + node.inputs[i] + "' of shape " + shapeToString(in[i]) + " is empty");
      if (elementCount(out) == 0 && computes) throw Error("the output " + shapeToString(out) + " is empty");
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
    shapes[node.output] = std::move(out);
  }
  return shapes;
}

const ValueInfo& Model::imageInput() const {
  if (inputs.size() != 1)
    throw Error(sourcePath + ": the model has " + std::to_string(inputs.size()) +
                " inputs; an image classifier has exactly one");
  const ValueInfo& input = inputs.front();
  const Shape& s = input.shape;
  if (s.size() != 4 || s[2] < 1 || s[3] < 1)
    throw Error(sourcePath + ": input '" + input.name + "' has shape " + shapeToString(s) +
                "; an image classifier takes N x C x H x W with fixed H and W");
  if (s[1] != 1 && s[1] != 3)
    throw Error(sourcePath + ": input '" + input.name + "' has " + std::to_string(s[1]) +
                " channels; ConvScope's pictures are gray (1 channel) or colour (3: R, G, B or B, G, R)");
  if (outputs.size() != 1)
    throw Error(sourcePath + ": the model has " + std::to_string(outputs.size()) + " outputs; a classifier has one");
  return input;
}

bool Model::endsWithSoftmax() const {
  for (const Node& node : nodes)
    if (!outputs.empty() && node.output == outputs.front().name)
      return node.op->description().role == LayerRole::Softmax;
  return false;
}

std::vector<LayerInfo> Model::layers() const {
  std::map<std::string, Shape> inputShapes;
  for (const ValueInfo& input : inputs) inputShapes[input.name] = concrete(input.shape);
  const std::map<std::string, Shape> shapes = inferShapes(inputShapes);
  std::vector<LayerInfo> table;
  for (const Node& node : nodes) {
    LayerInfo info{node.name, node.opType, shapes.at(node.output), 0, 0};
    std::vector<Shape> in;
    try {
      for (const std::string& name : node.inputs) {
        in.push_back(shapes.at(name));
        if (const auto w = weights.find(name); w != weights.end())
          info.parameters = checkedAdd(info.parameters, w->second.size(), "the parameter count");
      }
      info.flops = node.op->flops(in, info.outputShape);
    } catch (const Error& e) {
      throw Error(sourcePath + ": node '" + node.name + "' (" + node.opType + "): " + e.what());
    }
    table.push_back(std::move(info));
  }
  return table;
}

int64_t Model::parameterCount() const {
  int64_t count = 0;
  for (const auto& [name, tensor] : weights) count += tensor.size();
  return count;
}

}  // namespace convscope
