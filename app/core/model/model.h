// A loaded network: its weights and its nodes in execution order, each with its Operator. It is
// immutable once loaded and shared (shared_ptr<const Model>) by engines, the GUI and benchmarks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/core/model/operator.h"
#include "app/core/util/tensor.h"

namespace convscope {

struct ValueInfo {
  std::string name;
  Shape shape;  // -1 where the model leaves a dimension free (the batch, usually)
};

struct Node {
  std::string name;  // the ONNX node name, or "<op>_<index>" when the file has none
  std::string opType;
  std::vector<std::string> inputs;  // runtime inputs: weights, graph inputs or earlier outputs
  std::string output;
  std::unique_ptr<Operator> op;
};

// One row of `convscope-cli info`: what a node produces for a single image and what it costs.
struct LayerInfo {
  std::string name;
  std::string opType;
  Shape outputShape;
  int64_t parameters = 0;
  int64_t flops = 0;
};

class Model {
 public:
  std::string name;  // file name without extension: "course-high"
  std::string sourcePath;
  int64_t irVersion = 0;
  int opset = 0;
  std::string producer;           // "pytorch 2.11.0"
  std::vector<ValueInfo> inputs;  // graph inputs that are not weights
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> weights;
  std::vector<Node> nodes;

  // Shapes of every value for the given runtime input shapes (free dimensions as given).
  // Throws convscope::Error naming the node whose shapes are inconsistent.
  std::map<std::string, Shape> inferShapes(const std::map<std::string, Shape>& inputShapes) const;
  // The graph inputs' shapes with every free dimension (the batch) set to `batch`.
  std::map<std::string, Shape> inputShapesFor(int64_t batch) const;

  // The model as a classifier of pictures: one input N x C x H x W with C 1 (gray) or 3 (colour),
  // one output. Throws convscope::Error saying why the model is not one.
  const ValueInfo& imageInput() const;
  int inputChannels() const { return static_cast<int>(imageInput().shape[1]); }
  int inputHeight() const { return static_cast<int>(imageInput().shape[2]); }
  int inputWidth() const { return static_cast<int>(imageInput().shape[3]); }
  bool endsWithSoftmax() const;

  std::vector<LayerInfo> layers() const;  // for one image
  int64_t parameterCount() const;
};

}  // namespace convscope
