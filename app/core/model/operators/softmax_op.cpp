// Softmax. Opset 13 changed its meaning: from 13 on it normalises along one axis (default -1);
// before, the input is flattened to 2-D at `axis` (default 1) and each row is normalised.
#include <array>

#include "app/core/model/operators/operator_families.h"
#include "app/core/util/error.h"
#include "app/core/util/host_softmax.h"

namespace convscope::ops {
namespace {

class SoftmaxOp final : public Operator {
 public:
  SoftmaxOp(int64_t axis, bool perAxis) : axis_(axis), perAxis_(perAxis) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    normalizeAxis(axis_, static_cast<int>(in[0].size()), "softmax axis");
    return in[0];
  }

  bool isRowSoftmax(const Shape& input) const override { return input.size() == 2 && (axis_ == 1 || axis_ == -1); }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    const std::array<int64_t, 3> parts = view(x.shape());
    const int64_t outer = parts[0], length = parts[1], inner = parts[2];
    Tensor out(x.shape());
    softmaxAlongAxis(x.data(), out.data(), outer, length, inner);
    return out;
  }

  bool hasDeviceKernel() const override { return true; }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun& run) const override {
    const auto [outer, length, inner] = view(in[0]->shape);
    DeviceTensor out = run.device.allocate(in[0]->shape);
    run.device.softmax(in[0]->data(), out.data(), outer, length, inner);
    return out;
  }

 private:
  // The tensor as [outer][length][inner]: with a per-axis softmax `length` is that axis; with the
  // old semantics `length` is everything from `axis` on and inner is 1.
  std::array<int64_t, 3> view(const Shape& shape) const {
    const int rank = static_cast<int>(shape.size());
    const int axis = normalizeAxis(axis_, rank, "softmax axis");
    int64_t outer = 1, length = 1, inner = 1;
    for (int d = 0; d < rank; ++d) {
      if (d < axis)
        outer *= shape[d];
      else if (d == axis || !perAxis_)
        length *= shape[d];
      else
        inner *= shape[d];
    }
    return {outer, length, inner};
  }

  int64_t axis_;
  bool perAxis_;
};

}  // namespace

std::unique_ptr<Operator> makeSoftmax(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  const bool perAxis = request.opset >= 13;
  return std::make_unique<SoftmaxOp>(request.attributes.getInt("axis", perAxis ? -1 : 1), perAxis);
}

}  // namespace convscope::ops
