// The one-input activations, value by value. The fusable ones (util/activations.h: the course's
// Relu, Tanh and Sigmoid, HardSwish, and Clip as ReLU6) and Identity have GPU kernels, and the fusable ones fuse
// into a conv's epilogue; their arithmetic is applyActivation() (util/host_epilogue.h), shared with the CPU
// variants' fused epilogues. The ones students' CNNs
// bring beyond those -- LeakyRelu, Elu, Gelu (both of its forms) and Erf (the older exporter writes
// Gelu as x * 0.5 * (1 + erf(x / sqrt 2))) -- and Dropout, which at inference passes its input
// through, have no GPU kernel: on a GPU plan they are host round trips, which the plan shows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "app/core/model/operators/operator_families.h"
#include "app/core/util/error.h"
#include "app/core/util/host_epilogue.h"

namespace convscope::ops {
namespace {

// A fusable activation, or (nullopt) Identity.
class ElementwiseOp final : public Operator {
 public:
  explicit ElementwiseOp(std::optional<Activation> activation) : activation_(activation) {}

  Shape outputShape(const std::vector<Shape>& in) const override { return in[0]; }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    Tensor out = Tensor::uninitialized(x.shape());
    const float* src = x.data();
    float* dst = out.data();
    const int64_t n = x.size();
    if (!activation_) {
      std::copy(src, src + n, dst);
      return out;
    }
    // Blocks of 16K elements: large enough to hide the loop overhead, many enough to share out.
    // One block (a dense layer of one image) stays on this thread: waking the others would cost
    // more than the work.
    constexpr int64_t kBlock = 16384;
    const Activation kind = *activation_;
#pragma omp parallel for schedule(static) if (n > kBlock)
    for (int64_t first = 0; first < n; first += kBlock)
      applyActivation(kind, src + first, dst + first, std::min(kBlock, n - first));
    return out;
  }

  bool hasDeviceKernel() const override {
    return true;
  }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun& run) const override {
    if (!activation_) return *in[0];  // device tensors are never written after creation
    DeviceTensor out = run.device.allocate(in[0]->shape);
    run.device.activation(*activation_, in[0]->data(), out.data(), out.size());
    return out;
  }

  std::optional<EpilogueStep> asEpilogueStep(const Shape&) const override {
    if (!activation_) return std::nullopt;
    EpilogueStep step;
    step.activation = *activation_;
    return step;
  }

  int64_t flops(const std::vector<Shape>&, const Shape& out) const override {
    return activation_ ? elementCount(out) : 0;
  }

 private:
  std::optional<Activation> activation_;
};

enum class Function { LeakyRelu, Elu, GeluErf, GeluTanh, Erf };

class ScalarFunctionOp final : public Operator {
 public:
  ScalarFunctionOp(Function function, float alpha) : function_(function), alpha_(alpha) {}

  Shape outputShape(const std::vector<Shape>& in) const override { return in[0]; }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    Tensor out = Tensor::uninitialized(x.shape());
    const float* src = x.data();
    float* dst = out.data();
    const int64_t n = x.size();
#pragma omp parallel for schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) dst[i] = apply(src[i]);
    return out;
  }

  int64_t flops(const std::vector<Shape>&, const Shape& out) const override {
    // Gelu's and Erf's few multiplications and a transcendental function each; an estimate.
    const bool costly = function_ == Function::GeluErf || function_ == Function::GeluTanh;
    return elementCount(out) * (costly ? 8 : 1);
  }

 private:
  float apply(float x) const {
    // In double, so that the float result is the correctly rounded function, as PyTorch's is to
    // within its own rounding.
    const double v = x;
    switch (function_) {
      case Function::LeakyRelu:
        return x >= 0.0f ? x : static_cast<float>(alpha_ * v);
      case Function::Elu:
        return x > 0.0f ? x : static_cast<float>(alpha_ * std::expm1(v));
      case Function::GeluErf:
        return static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
      case Function::GeluTanh: {
        const double inner = std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v);
        return static_cast<float>(0.5 * v * (1.0 + std::tanh(inner)));
      }
      case Function::Erf:
        return static_cast<float>(std::erf(v));
    }
    return x;
  }

  Function function_;
  float alpha_;
};

// Clip to a range other than ReLU6's [0, 6]: value by value, on the host. Each bound is a constant
// read at load time, or a one-value input known only at run time. A bound below the other makes
// every value the upper one (ONNX's rule); a NaN passes through, as in PyTorch.
struct ClipBound {
  float value = 0.0f;  // the constant, when `input` < 0
  int input = -1;      // otherwise the run's input that holds it
  const char* name = "";
};

class ClipRangeOp final : public Operator {
 public:
  ClipRangeOp(ClipBound lowest, ClipBound highest) : lowest_(lowest), highest_(highest) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    for (const ClipBound& bound : {lowest_, highest_})
      if (bound.input >= 0 && elementCount(in[static_cast<size_t>(bound.input)]) != 1)
        throw Error(std::string("its ") + bound.name + " must be one value, got shape " +
                    shapeToString(in[static_cast<size_t>(bound.input)]));
    return in[0];
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    Tensor out = Tensor::uninitialized(x.shape());
    const float lowest = valueOf(lowest_, in), highest = valueOf(highest_, in);
    const float* src = x.data();
    float* dst = out.data();
    const int64_t n = x.size();
#pragma omp parallel for schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) {
      const float raised = src[i] < lowest ? lowest : src[i];
      dst[i] = raised > highest ? highest : raised;
    }
    return out;
  }

  int64_t flops(const std::vector<Shape>& in, const Shape&) const override {
    return elementCount(in[0]);
  }

 private:
  static float valueOf(const ClipBound& bound, const std::vector<const Tensor*>& in) {
    if (bound.input < 0) return bound.value;
    const Tensor& t = *in[static_cast<size_t>(bound.input)];
    if (t.size() != 1)
      throw Error(std::string("its ") + bound.name + " must be one value, got shape " + shapeToString(t.shape()));
    return t[0];
  }

  ClipBound lowest_, highest_;
};

// Dropout at inference: the identity (ONNX: output = input unless training_mode is true).
class DropoutOp final : public Operator {
 public:
  Shape outputShape(const std::vector<Shape>& in) const override { return in[0]; }
  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override { return *in[0]; }
  bool hasDeviceKernel() const override { return true; }
  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun&) const override {
    return *in[0];  // device tensors are never written after creation
  }
  int64_t flops(const std::vector<Shape>&, const Shape&) const override { return 0; }
};

void requireFinite(float value, const std::string& name) {
  if (!std::isfinite(value)) throw Error("attribute " + name + " must be a finite number");
}

}  // namespace

namespace {

std::unique_ptr<Operator> makeElementwise(OperatorRequest& request, std::optional<Activation> activation) {
  requireInputCount(request, 1, 1);
  return std::make_unique<ElementwiseOp>(activation);
}

// LeakyRelu and Elu: alpha, with ONNX's default for each.
std::unique_ptr<Operator> makeWithAlpha(OperatorRequest& request, Function function, float defaultAlpha) {
  requireInputCount(request, 1, 1);
  const float alpha = request.attributes.getFloat("alpha", defaultAlpha);
  requireFinite(alpha, "alpha");
  return std::make_unique<ScalarFunctionOp>(function, alpha);
}

// One bound of Clip: opset 11 on, the optional input `index`, a constant read now or else an input
// read at run time (its position among `runtime`, the inputs the node keeps); before, the
// attribute `name`. Absent, the range is open on that side.
ClipBound clipBound(OperatorRequest& request, size_t index, const char* name, float open,
                    std::vector<std::string>& runtime) {
  ClipBound bound{open, -1, name};
  if (request.opset < 11) {
    bound.value = request.attributes.getFloat(name, open);
    if (std::isnan(bound.value)) throw Error(std::string("attribute ") + name + " must be a number, not NaN");
    return bound;
  }
  if (request.inputs.size() <= index || request.inputs[index].empty()) return bound;
  const std::string& input = request.inputs[index];
  const Tensor* value = request.floatConstant(input);
  if (!value) {
    bound.input = static_cast<int>(runtime.size());
    runtime.push_back(input);
    return bound;
  }
  if (value->size() != 1)
    throw Error(std::string("its ") + name + " '" + input + "' holds " + std::to_string(value->size()) +
                " values, not one");
  if (std::isnan((*value)[0])) throw Error(std::string("its ") + name + " '" + input + "' is NaN");
  bound.value = (*value)[0];
  return bound;
}

// Clip: to the constant range [0, 6] it is ReLU6, the fusable row Clip; to [0, +inf) Relu; open on
// both sides Identity; any other range is computed on its own.
std::unique_ptr<Operator> makeClip(OperatorRequest& request) {
  // Not requireInputCount: min may be omitted ("") while max is given.
  if (request.inputs.empty() || request.inputs.size() > 3 || request.inputs[0].empty())
    throw Error("takes an input and at most a min and a max, got " + std::to_string(request.inputs.size()) + " inputs");
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  std::vector<std::string> runtime = {request.inputs[0]};
  const ClipBound lowest = clipBound(request, 1, "min", -kInfinity, runtime);
  const ClipBound highest = clipBound(request, 2, "max", kInfinity, runtime);
  request.inputs = runtime;  // the constant bounds are part of the operator now
  if (runtime.size() == 1) {
    if (lowest.value == 0.0f && highest.value == 6.0f) return std::make_unique<ElementwiseOp>(Activation::Clip);
    if (lowest.value == 0.0f && highest.value == kInfinity) return std::make_unique<ElementwiseOp>(Activation::Relu);
    if (lowest.value == -kInfinity && highest.value == kInfinity) return std::make_unique<ElementwiseOp>(std::nullopt);
  }
  return std::make_unique<ClipRangeOp>(lowest, highest);
}

}  // namespace

template <Activation A>
std::unique_ptr<Operator> makeFusableActivation(OperatorRequest& request) {
  if constexpr (A == Activation::Clip) {
    return makeClip(request);
  } else {
    return makeElementwise(request, A);
  }
}
#define CONVSCOPE_ACTIVATION_FACTORY(name, onednn, alpha, beta, nondecreasing, value) \
  template std::unique_ptr<Operator> makeFusableActivation<Activation::name>(OperatorRequest&);
CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ACTIVATION_FACTORY)
#undef CONVSCOPE_ACTIVATION_FACTORY

std::unique_ptr<Operator> makeIdentity(OperatorRequest& request) {
  return makeElementwise(request, std::nullopt);
}

std::unique_ptr<Operator> makeLeakyRelu(OperatorRequest& request) {
  return makeWithAlpha(request, Function::LeakyRelu, 0.01f);
}

std::unique_ptr<Operator> makeElu(OperatorRequest& request) {
  return makeWithAlpha(request, Function::Elu, 1.0f);
}

std::unique_ptr<Operator> makeGelu(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  const std::string approximate = request.attributes.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    throw Error("attribute approximate '" + approximate + "' is not valid (none or tanh)");
  return std::make_unique<ScalarFunctionOp>(approximate == "tanh" ? Function::GeluTanh : Function::GeluErf, 0.0f);
}

std::unique_ptr<Operator> makeErf(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  return std::make_unique<ScalarFunctionOp>(Function::Erf, 0.0f);
}

std::unique_ptr<Operator> makeDropout(OperatorRequest& request) {
  requireInputCount(request, 1, 3);
  // Opset 12+: ratio and training_mode are inputs. A ratio is harmless at inference; a
  // training_mode input (a bool) is refused by the loader as a non-float input, and the old
  // attribute form too: only inference is run.
  if (request.attributes.has("is_test") && request.attributes.getInt("is_test", 1) != 1)
    throw Error("attribute is_test=0 asks for training-mode dropout; only inference is supported");
  const float ratio = request.attributes.getFloat("ratio", 0.5f);
  if (!(ratio >= 0.0f && ratio < 1.0f)) throw Error("attribute ratio must lie in [0, 1)");
  request.attributes.getInt("seed", 0);  // randomness of training mode only
  if (request.inputs.size() == 3)
    throw Error("a training_mode input is not supported (only inference; export the model in eval mode)");
  // A ratio input (constant or not) is read by no one: it changes nothing at inference.
  return std::make_unique<DropoutOp>();
}

}  // namespace convscope::ops
