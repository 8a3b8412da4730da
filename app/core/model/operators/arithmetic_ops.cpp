// Two-input arithmetic with NumPy broadcasting: Add (a bias after MatMul, residual sums) and the
// Sub, Mul, Div and Pow that students' models bring (Gelu written out by the exporters, scaling).
#include <cmath>

#include "app/core/model/operators/broadcast.h"
#include "app/core/model/operators/operator_families.h"

namespace convscope::ops {
namespace {

enum class Arithmetic { Add, Sub, Mul, Div, Pow };

class BinaryArithmeticOp final : public Operator {
 public:
  explicit BinaryArithmeticOp(Arithmetic kind) : kind_(kind) {}

  Shape outputShape(const std::vector<Shape>& in) const override { return broadcastShape(in[0], in[1]); }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Shape shape = outputShape({in[0]->shape(), in[1]->shape()});
    Tensor out = broadcastTo(*in[0], shape);
    const Tensor& bSource = *in[1];
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
