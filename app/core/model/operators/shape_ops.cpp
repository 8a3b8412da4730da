// Flatten and Reshape change only the shape; the values are copied through unchanged. Reshape's
// target shape must be a constant known when the model loads (PyTorch exports it as one).
#include "app/core/model/operators/operator_families.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

// What both share: the values pass through, only the shape changes, and nothing is computed.
class ShapeOnlyOp : public Operator {
 public:
  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    Tensor out = *in[0];
    out.reshape(outputShape({in[0]->shape()}));
    return out;
  }

  bool hasDeviceKernel() const override { return true; }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun&) const override {
    DeviceTensor out = *in[0];
    out.shape = outputShape({in[0]->shape});
    return out;
  }

  int64_t flops(const std::vector<Shape>&, const Shape&) const override { return 0; }
};

class FlattenOp final : public ShapeOnlyOp {
 public:
  explicit FlattenOp(int64_t axis) : axis_(axis) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    const int axis = normalizeAxis(axis_, static_cast<int>(in[0].size()), "flatten axis", true);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < static_cast<int>(in[0].size()); ++d) {
      int64_t& side = d < axis ? outer : inner;
      // The message is built only on overflow: this runs on every inference.
      if (int64_t product = 0; __builtin_mul_overflow(side, in[0][d], &product))
        checkedMul(side, in[0][d], "the flattened shape of " + shapeToString(in[0]));  // throws
      else
        side = product;
    }
    return {outer, inner};
  }

 private:
  int64_t axis_;
};

class ReshapeOp final : public ShapeOnlyOp {
 public:
  ReshapeOp(std::vector<int64_t> target, bool allowZero) : target_(std::move(target)), allowZero_(allowZero) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    const Shape& x = in[0];
    Shape out(target_.size());
    int inferred = -1;
    int64_t known = 1;
    for (size_t i = 0; i < target_.size(); ++i) {
      int64_t d = target_[i];
      if (d == 0 && !allowZero_) {
        if (i >= x.size())
          throw Error("target dimension " + std::to_string(i) + " is 0 but the input has no such axis");
        d = x[i];
      }
      if (d == -1) {
        if (inferred >= 0) throw Error("the target shape has more than one -1");
        inferred = static_cast<int>(i);
        continue;
      }
      if (d < 0) throw Error("target dimension " + std::to_string(d) + " is invalid");
      out[i] = d;
    }
    Shape knownDims;
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int>(i) != inferred) knownDims.push_back(out[i]);
    try {
      known = elementCount(knownDims);
    } catch (const Error&) {
      throw Error("the target shape " + describeTarget() + " is too large");
    }
    const int64_t total = elementCount(x);
    if (inferred >= 0) {
      if (known == 0 || total % known != 0)
        throw Error("input " + shapeToString(x) + " cannot be reshaped to " + describeTarget());
      out[static_cast<size_t>(inferred)] = total / known;
    } else if (known != total) {
      throw Error("input " + shapeToString(x) + " has " + std::to_string(total) + " elements, the target shape " +
                  describeTarget() + " holds " + std::to_string(known));
    }
    return out;
  }

 private:
  std::string describeTarget() const {
    std::string text;
    for (int64_t d : target_) text += (text.empty() ? "" : ",") + std::to_string(d);
    return "(" + text + ")";
  }

  std::vector<int64_t> target_;
  bool allowZero_;
};

}  // namespace

std::unique_ptr<Operator> makeFlatten(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  return std::make_unique<FlattenOp>(request.attributes.getInt("axis", 1));
}

std::unique_ptr<Operator> makeReshape(OperatorRequest& request) {
  requireInputCount(request, 2, 2);
  const std::vector<int64_t>* target = request.intConstant(request.inputs[1]);
  if (!target)
    throw Error("the target shape '" + request.inputs[1] +
                "' is computed at run time; only a constant target shape is supported");
  const int64_t allowZero = request.attributes.getInt("allowzero", 0);
  request.inputs.pop_back();  // consumed here, not a runtime input
  return std::make_unique<ReshapeOp>(*target, allowZero == 1);
}

}  // namespace convscope::ops
