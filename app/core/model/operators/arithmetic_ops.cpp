// Two-input arithmetic with NumPy broadcasting: Add (a bias after MatMul, residual sums) and the
// Sub, Mul, Div and Pow that students' models bring (Gelu written out by the exporters, scaling).
// All but Pow run on the GPU too (Device::arithmetic), so a residual sum is no host round trip.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "app/core/model/operators/broadcast.h"
#include "app/core/model/operators/operator_families.h"
#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

enum class Arithmetic { Add, Sub, Mul, Div, Pow };

// out[i] = f(a[i], b[i]). Large sums are shared among the cores; a small one stays on this thread,
// where waking the others would cost more than the work.
template <class F>
void combine(const float* a, const float* b, float* out, int64_t n, F f) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

// out = a (op) b as the device takes it: the axes of size 1 dropped and neighbours merged where
// both inputs step over them alike (a residual sum of any rank is one axis, a channel vector
// three), so that any broadcast a CNN writes fits BroadcastOperands::kMaxRank. A host round trip
// cannot stand in for the rest (the plan counts this stage on the device, and a recording or a
// held queue cannot wait for the host): those are refused, naming the shapes.
BroadcastOperands deviceOperands(const Shape& a, const Shape& b, const Shape& out) {
  const std::vector<int64_t> aStrides = broadcastStrides(a, out), bStrides = broadcastStrides(b, out);
  std::vector<int64_t> dims, aSteps, bSteps;
  for (size_t axis = 0; axis < out.size(); ++axis) {
    if (out[axis] == 1) continue;
    if (!dims.empty() && aSteps.back() == aStrides[axis] * out[axis] && bSteps.back() == bStrides[axis] * out[axis]) {
      dims.back() *= out[axis];  // index i * n + j of the two axes steps as they did
      aSteps.back() = aStrides[axis];
      bSteps.back() = bStrides[axis];
      continue;
    }
    dims.push_back(out[axis]);
    aSteps.push_back(aStrides[axis]);
    bSteps.push_back(bStrides[axis]);
  }
  if (dims.size() > static_cast<size_t>(BroadcastOperands::kMaxRank))
    throw Error("shapes " + shapeToString(a) + " and " + shapeToString(b) + " broadcast over " +
                std::to_string(dims.size()) + " alternating axes; the GPU's arithmetic takes " +
                std::to_string(BroadcastOperands::kMaxRank));
  BroadcastOperands operands;
  operands.rank = static_cast<int>(dims.size());
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    operands.outDims[axis] = dims[axis];
    operands.aStrides[axis] = aSteps[axis];
    operands.bStrides[axis] = bSteps[axis];
  }
  return operands;
}

class BinaryArithmeticOp final : public Operator {
 public:
  explicit BinaryArithmeticOp(Arithmetic kind) : kind_(kind) {}

  Shape outputShape(const std::vector<Shape>& in) const override { return broadcastShape(in[0], in[1]); }

  // Add, Sub, Mul and Div have a GPU kernel (Device::arithmetic); Pow, which the host computes in
  // double, does not.
  bool hasDeviceKernel() const override { return deviceArithmetic().has_value(); }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun& run) const override {
    const std::optional<BinaryArithmetic> op = deviceArithmetic();
    if (!op) return Operator::runOnDevice(in, run);
    const Shape shape = broadcastShape(in[0]->shape, in[1]->shape);
    DeviceTensor out = run.device.allocate(shape);
    if (elementCount(shape) == 0) return out;
    run.device.arithmetic(*op, deviceOperands(in[0]->shape, in[1]->shape, shape), in[0]->data(), in[1]->data(),
                          out.data());
    return out;
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Shape shape = outputShape({in[0]->shape(), in[1]->shape()});
    const Tensor& bSource = *in[1];
    // Operands of the output's shape (a residual sum): one pass, no copies, the kind chosen once.
    if (in[0]->shape() == shape && bSource.shape() == shape) {
      Tensor out = Tensor::uninitialized(shape);
      const float *a = in[0]->data(), *b = bSource.data();
      float* result = out.data();
      const int64_t n = out.size();
      switch (kind_) {
        case Arithmetic::Add:
          combine(a, b, result, n, [](float x, float y) { return x + y; });
          break;
        case Arithmetic::Sub:
          combine(a, b, result, n, [](float x, float y) { return x - y; });
          break;
        case Arithmetic::Mul:
          combine(a, b, result, n, [](float x, float y) { return x * y; });
          break;
        case Arithmetic::Div:
          combine(a, b, result, n, [](float x, float y) { return x / y; });
          break;
        case Arithmetic::Pow:
          combine(a, b, result, n, [this](float x, float y) { return apply(x, y); });
          break;
      }
      return out;
    }
    Tensor out = broadcastTo(*in[0], shape);
    // The common cases: a bias vector along the last axis (after MatMul), or a scalar, applied
    // without expanding it.
    if (bSource.size() == 1 || (bSource.rank() == 1 && bSource.size() == shape.back())) {
      const int64_t n = bSource.size();
      for (int64_t i = 0; i < out.size(); ++i) out[i] = apply(out[i], bSource[i % n]);
      return out;
    }
    const Tensor b = broadcastTo(bSource, shape);
    for (int64_t i = 0; i < out.size(); ++i) out[i] = apply(out[i], b[i]);
    return out;
  }

 private:
  float apply(float a, float b) const {
    switch (kind_) {
      case Arithmetic::Add:
        return a + b;
      case Arithmetic::Sub:
        return a - b;
      case Arithmetic::Mul:
        return a * b;
      case Arithmetic::Div:
        return a / b;
      case Arithmetic::Pow:  // GELU's tanh form, x^3, as the dynamo exporter writes it
        return static_cast<float>(std::pow(double{a}, double{b}));
    }
    return a;
  }

  std::optional<BinaryArithmetic> deviceArithmetic() const {
    switch (kind_) {
      case Arithmetic::Add:
        return BinaryArithmetic::Add;
      case Arithmetic::Sub:
        return BinaryArithmetic::Sub;
      case Arithmetic::Mul:
        return BinaryArithmetic::Mul;
      case Arithmetic::Div:
        return BinaryArithmetic::Div;
      case Arithmetic::Pow:
        break;
    }
    return std::nullopt;
  }

  Arithmetic kind_;
};

}  // namespace

namespace {

std::unique_ptr<Operator> makeBinary(OperatorRequest& request, Arithmetic kind) {
  requireInputCount(request, 2, 2);
  return std::make_unique<BinaryArithmeticOp>(kind);
}

}  // namespace

std::unique_ptr<Operator> makeAdd(OperatorRequest& request) {
  return makeBinary(request, Arithmetic::Add);
}

std::unique_ptr<Operator> makeSub(OperatorRequest& request) {
  return makeBinary(request, Arithmetic::Sub);
}

std::unique_ptr<Operator> makeMul(OperatorRequest& request) {
  return makeBinary(request, Arithmetic::Mul);
}

std::unique_ptr<Operator> makeDiv(OperatorRequest& request) {
  return makeBinary(request, Arithmetic::Div);
}

std::unique_ptr<Operator> makePow(OperatorRequest& request) {
  return makeBinary(request, Arithmetic::Pow);
}

}  // namespace convscope::ops
