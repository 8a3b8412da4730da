// The one-input activations, value by value. The fusable ones (util/activations.h: the course's
// Relu, Tanh and Sigmoid, and HardSwish) and Identity have GPU kernels, and the fusable ones fuse
// into a conv's epilogue; their arithmetic is applyActivation() (util/host_epilogue.h), shared with the CPU
// variants' fused epilogues. The ones students' CNNs
// bring beyond those -- LeakyRelu, Elu, Gelu (both of its forms) and Erf (the older exporter writes
// Gelu as x * 0.5 * (1 + erf(x / sqrt 2))) -- and Dropout, which at inference passes its input
// through, have no GPU kernel: on a GPU plan they are host round trips, which the plan shows.
#include <algorithm>
#include <cmath>
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
    Tensor out(x.shape());
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
    Tensor out(x.shape());
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

}  // namespace

template <Activation A>
std::unique_ptr<Operator> makeFusableActivation(OperatorRequest& request) {
  return makeElementwise(request, A);
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
