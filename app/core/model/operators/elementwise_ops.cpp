// One-input element-wise operators: the activations the course networks use, and Identity. The
// arithmetic is applyActivation() (util/host_epilogue.h), shared with the CPU variants' fused
// epilogues.
#include <algorithm>

#include "app/core/model/operators/operator_families.h"
#include "app/core/util/error.h"
#include "app/core/util/host_epilogue.h"

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
    if (kind_ == Kind::Identity) {
      std::copy(src, src + n, dst);
      return out;
    }
    // Blocks of 16K elements: large enough to hide the loop overhead, many enough to share out.
    // One block (a dense layer of one image) stays on this thread: waking the others would cost
    // more than the work.
    constexpr int64_t kBlock = 16384;
    const Activation kind = activation();
#pragma omp parallel for schedule(static) if (n > kBlock)
    for (int64_t first = 0; first < n; first += kBlock)
      applyActivation(kind, src + first, dst + first, std::min(kBlock, n - first));
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
