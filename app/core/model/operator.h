// The operators a model is made of. Each ONNX node becomes one Operator that knows its output
// shape, its arithmetic and its cost; the loader builds them through createOperator(), which is
// the only place that maps ONNX operator names to code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/conv_problem.h"
#include "app/core/device/device.h"
#include "app/core/model/attributes.h"
#include "app/core/util/tensor.h"

namespace convscope {

// The engine's hook for convolution arithmetic: routes it to the selected backend, times it and
// falls back where the backend declines a shape.
// A fully connected layer, y = x W^T + b for W [outputs][inputs] (PyTorch's Linear as ONNX Gemm
// with transB = 1), or y = x W + b for W [inputs][outputs]: what a whole-network kernel computes.
struct DenseStep {
  int64_t inputs = 0, outputs = 0;
  bool weightsTransposed = true;  // W is [outputs][inputs]
  bool hasBias = false;           // the third input, one value per output
};

class ConvExecutor {
 public:
  virtual ~ConvExecutor() = default;
  virtual void convolve(const ConvProblem& problem, const float* input, const float* weights, float* output) = 0;
};

// What an operator needs to run on the GPU: the device, and the engine's hook that routes a
// convolution to the selected variant and records its timing.
struct DeviceRun {
  Device& device;
  std::function<void(const ConvProblem&, const float* input, const float* weights, float* output)> convolve;
};

// What a node is to a reader and to the model's checks. The factory sets it from its table, the
// only place that names ONNX operators; the layer titles and the model's checks ask the operator.
enum class LayerRole {
  Convolution,    // Conv
  Dense,          // Gemm, MatMul
  WindowPooling,  // MaxPool, AveragePool
  Flattening,     // the same values in another shape: Flatten, Reshape
  Reshaping,      // one image's shape changes, no window: global pooling, Resize
  Concatenation,  // Concat
  Softmax,        // Softmax
  PassThrough,    // the same values, the same shape: Identity, Dropout (at inference)
  Other,          // value by value: activations, arithmetic, batch norm
};

struct LayerDescription {
  std::string kind;  // the reader's name of the layer: "conv", "dense", "max-pool", "tanh" ...
  LayerRole role = LayerRole::Other;
};

struct OperatorRequest;

class Operator {
 public:
  virtual ~Operator() = default;
  const LayerDescription& description() const { return description_; }
  // Whether its inputs and output may not be empty: it computes through BLAS or a conv backend,
  // which take no zero-sized matrix. Shape-only operators may pass empty tensors along (as ONNX
  // allows).
  bool refusesEmptyTensors() const {
    return description_.role == LayerRole::Convolution || description_.role == LayerRole::Dense ||
           description_.role == LayerRole::WindowPooling;
  }
  // Throws convscope::Error (without node context; the caller adds it) on inconsistent shapes.
  virtual Shape outputShape(const std::vector<Shape>& inputs) const = 0;
  virtual Tensor run(const std::vector<const Tensor*>& inputs, ConvExecutor& conv) const = 0;
  // The same on device tensors. The default copies the inputs to the host, runs run() and copies
  // the result back: correct for every operator, fast for none. The course's layers override it.
  virtual DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& inputs, DeviceRun& run) const;
  // Whether runOnDevice() has its own GPU path; false: the default host round trip, which the
  // engine's plan shows as such.
  virtual bool hasDeviceKernel() const { return false; }
  // This node as a step of a conv kernel's epilogue (an activation, a pooling), for the planner's
  // fused stages; nullopt when it cannot be one. `input`: the shape it receives.
  virtual std::optional<EpilogueStep> asEpilogueStep(const Shape& input) const {
    (void)input;
    return std::nullopt;
  }
  // The convolution this node hands to the conv backend for these input shapes, if it is one
  // (the engine asks the backend how much workspace it needs before running it).
  virtual std::optional<ConvProblem> convProblem(const std::vector<Shape>& inputs) const {
    (void)inputs;
    return std::nullopt;
  }
  // This node as a fully connected layer for these input shapes (whole-network kernels), if it
  // is one: a Gemm without a transposed input or scaling, whose C, if any, is one bias per output.
  virtual std::optional<DenseStep> asDenseStep(const std::vector<Shape>& inputs) const {
    (void)inputs;
    return std::nullopt;
  }
  // Whether it is a softmax over each row of a 2-D input of this shape.
  virtual bool isRowSoftmax(const Shape& input) const {
    (void)input;
    return false;
  }
  // Floating-point operations for these shapes; multiply-add counts two.
  virtual int64_t flops(const std::vector<Shape>& inputs, const Shape& output) const {
    (void)inputs;
    return elementCount(output);
  }

 private:
  friend std::unique_ptr<Operator> createOperator(OperatorRequest& request);
  LayerDescription description_;
};

// One element of an int64 vector the loader computed from shapes (Shape -> Slice -> Concat, as
// the exporters write F.interpolate's output size): a constant, or where it depends on the batch,
// which dimension of which tensor it is.
struct ShapeElement {
  std::optional<int64_t> value;
  std::string tensor;  // when !value: the tensor whose dimension this is
  int axis = 0;
};

struct OperatorRequest {
  std::string opType;
  int opset = 0;
  Attributes& attributes;
  // Runtime input names, trailing omitted ("") inputs already dropped. An operator that takes an
  // input as a load-time constant (Reshape's shape) removes it from this list.
  std::vector<std::string>& inputs;
  size_t outputCount = 1;
  // The value of an int64 constant (initializer or Constant node), or nullptr.
  std::function<const std::vector<int64_t>*(const std::string&)> intConstant;
  // The value of a float constant (initializer or Constant node: Resize's scales), or nullptr.
  std::function<const Tensor*(const std::string&)> floatConstant;
  // The value of an int64 vector computed from shapes at load time, some elements known only at
  // run time (the batch); nullptr when `name` is no such vector.
  std::function<const std::vector<ShapeElement>*(const std::string&)> shapeExpression;
};

// Throws convscope::Error with the reason (unsupported attribute value, wrong input count ...).
std::unique_ptr<Operator> createOperator(OperatorRequest& request);

// The description of an ONNX operator type; one ConvScope does not run is "Other", its kind the
// name in lower case ("HardSwish": "hardswish").
LayerDescription describeOperator(const std::string& opType);

const std::vector<std::string>& supportedOperators();
bool isSupportedOperator(const std::string& opType);

}  // namespace convscope
