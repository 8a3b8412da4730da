// One-input element-wise operators: the activations the course networks use, and Identity.
// This file is built with -ffast-math so that GCC calls glibc's vectorised tanhf/expf (libmvec,
// a few ULP) inside the SIMD loops: tanh over 10,000 feature-map stacks is otherwise slower
// than the convolutions themselves.
#include <algorithm>
#include <cmath>

#include "app/core/model/operators/operator_families.h"
#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

enum class Kind { Relu, Tanh, Sigmoid, Identity };

class ElementwiseOp final : public Operator {
 public:
  explicit ElementwiseOp(Kind kind) : kind_(kind) {}

  Shape outputShape(const std::vector<Shape>& in) const override { return in[0]; }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    Tensor out(x.shape());
    const float* src = x.data();
    float* dst = out.data();
    const int64_t n = x.size();
    switch (kind_) {
      case Kind::Relu:
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
        break;
      case Kind::Tanh:
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; ++i) dst[i] = std::tanh(src[i]);
        break;
      case Kind::Sigmoid:
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; ++i) dst[i] = 1.0f / (1.0f + std::exp(-src[i]));
        break;
      case Kind::Identity:
        std::copy(src, src + n, dst);
        break;
    }
    return out;
  }

  bool hasDeviceKernel() const override {
    return true;
  }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun& run) const override {
    if (kind_ == Kind::Identity) return *in[0];  // device tensors are never written after creation
    DeviceTensor out = run.device.allocate(in[0]->shape);
    run.device.activation(activation(), in[0]->data(), out.data(), out.size());
    return out;
  }

  std::optional<EpilogueStep> asEpilogueStep(const Shape&) const override {
    if (kind_ == Kind::Identity) return std::nullopt;
    EpilogueStep step;
    step.activation = activation();
    return step;
  }

  int64_t flops(const std::vector<Shape>&, const Shape& out) const override {
    return kind_ == Kind::Identity ? 0 : elementCount(out);
  }

 private:
  Activation activation() const {
    return kind_ == Kind::Relu ? Activation::Relu : kind_ == Kind::Tanh ? Activation::Tanh : Activation::Sigmoid;
  }

  Kind kind_;
};

}  // namespace

std::unique_ptr<Operator> makeActivation(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  const std::string& op = request.opType;
  const Kind kind = op == "Relu"      ? Kind::Relu
                    : op == "Tanh"    ? Kind::Tanh
                    : op == "Sigmoid" ? Kind::Sigmoid
                                      : Kind::Identity;
  return std::make_unique<ElementwiseOp>(kind);
}

}  // namespace convscope::ops
