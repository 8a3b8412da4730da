// The dense layers: Gemm (PyTorch's Linear in the TorchScript exporter) and MatMul (Linear in some
// exports, followed by an Add: arithmetic_ops.cpp). All products go through sgemm().
#include <algorithm>
#include <cmath>

#include "app/core/model/operators/broadcast.h"
#include "app/core/model/operators/operator_families.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"
#include "app/core/util/gemm.h"

namespace convscope::ops {
namespace {

class GemmOp final : public Operator {
 public:
  GemmOp(bool transA, bool transB, float alpha, float beta)
      : transA_(transA), transB_(transB), alpha_(alpha), beta_(beta) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    requireRank(in[0], 2, "Gemm input A");
    requireRank(in[1], 2, "Gemm input B");
    const int64_t m = transA_ ? in[0][1] : in[0][0];
    const int64_t kA = transA_ ? in[0][0] : in[0][1];
    const int64_t kB = transB_ ? in[1][1] : in[1][0];
    const int64_t n = transB_ ? in[1][0] : in[1][1];
    if (kA != kB)
      throw Error("A " + shapeToString(in[0]) + (transA_ ? " (transposed)" : "") + " and B " + shapeToString(in[1]) +
                  (transB_ ? " (transposed)" : "") + " have inner dimensions " + std::to_string(kA) + " and " +
                  std::to_string(kB));
    if (in.size() > 2) {
      bool broadcasts = in[2].size() <= 2;
      try {
        broadcasts = broadcasts && broadcastShape(in[2], {m, n}) == Shape{m, n};
      } catch (const Error&) {
        broadcasts = false;
      }
      if (!broadcasts)
        throw Error("C " + shapeToString(in[2]) + " does not broadcast to the output [" + std::to_string(m) + "x" +
                    std::to_string(n) + "]");
    }
    return {m, n};
  }

  std::optional<DenseStep> asDenseStep(const std::vector<Shape>& in) const override {
    if (transA_ || alpha_ != 1.0f || in.size() < 2 || in[0].size() != 2 || in[1].size() != 2) return std::nullopt;
    DenseStep step;
    step.weightsTransposed = transB_;
    step.inputs = transB_ ? in[1][1] : in[1][0];
    step.outputs = transB_ ? in[1][0] : in[1][1];
    if (in[0][1] != step.inputs) return std::nullopt;
    if (in.size() > 2 && beta_ != 0.0f) {
      // One bias per output ([n] or [1, n]), added once.
      if (beta_ != 1.0f || elementCount(in[2]) != step.outputs || (in[2].size() == 2 && in[2][0] != 1) ||
          in[2].size() > 2)
        return std::nullopt;
      step.hasBias = true;
    }
    return step;
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    std::vector<Shape> shapes;
    for (const Tensor* t : in) shapes.push_back(t->shape());
    const Shape shape = outputShape(shapes);
    const int m = static_cast<int>(shape[0]);
    const int n = static_cast<int>(shape[1]);
    const int k = static_cast<int>(transA_ ? in[0]->dim(0) : in[0]->dim(1));
    Tensor out = in.size() > 2 && beta_ != 0.0f ? broadcastTo(*in[2], shape) : Tensor(shape);
    sgemm(transA_, transB_, m, n, k, alpha_, in[0]->data(), static_cast<int>(in[0]->dim(1)), in[1]->data(),
          static_cast<int>(in[1]->dim(1)), in.size() > 2 ? beta_ : 0.0f, out.data(), n);
    return out;
  }

  bool hasDeviceKernel() const override { return true; }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun& run) const override {
    std::vector<Shape> shapes;
    for (const DeviceTensor* t : in) shapes.push_back(t->shape);
    const Shape shape = outputShape(shapes);
    const int m = static_cast<int>(shape[0]);
    const int n = static_cast<int>(shape[1]);
    const int k = static_cast<int>(transA_ ? in[0]->shape[0] : in[0]->shape[1]);
    DeviceTensor out = run.device.allocate(shape);
    float beta = 0.0f;
    if (in.size() > 2 && beta_ != 0.0f) {
      const Shape& c = in[2]->shape;
      const int rows = c.size() == 2 ? static_cast<int>(c[0]) : 1;
      const int cols = c.empty() ? 1 : static_cast<int>(c.back());
      run.device.broadcast2d(in[2]->data(), rows, cols, out.data(), m, n);
      beta = beta_;
    }
    run.device.gemm(transA_, transB_, m, n, k, alpha_, in[0]->data(), static_cast<int>(in[0]->shape[1]), in[1]->data(),
                    static_cast<int>(in[1]->shape[1]), beta, out.data(), n);
    return out;
  }

  int64_t flops(const std::vector<Shape>& in, const Shape& out) const override {
    const int64_t k = transA_ ? in[0][0] : in[0][1];
    const std::string what =
        "the FLOP count of " + shapeToString(out) + " outputs of " + std::to_string(k) + " products";
    const int64_t products = checkedMul(2 * elementCount(out), k, what);
    return checkedAdd(products, in.size() > 2 ? elementCount(out) : 0, what);
  }

 private:
  bool transA_, transB_;
  float alpha_, beta_;
};

// NumPy matmul: the last two axes multiply, leading axes broadcast; rank-1 operands are promoted.
class MatMulOp final : public Operator {
 public:
  Shape outputShape(const std::vector<Shape>& in) const override { return plan(in[0], in[1]).out; }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Plan p = plan(in[0]->shape(), in[1]->shape());
    const Tensor a = broadcastTo(reshaped(*in[0], p.aShape), p.aBroadcast);
    const Tensor b = broadcastTo(reshaped(*in[1], p.bShape), p.bBroadcast);
    Tensor out(p.out);
    const int64_t batches = elementCount(p.batch);
    for (int64_t i = 0; i < batches; ++i)
      sgemm(false, false, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), 1.0f,
            a.data() + i * p.m * p.k, static_cast<int>(p.k), b.data() + i * p.k * p.n, static_cast<int>(p.n), 0.0f,
            out.data() + i * p.m * p.n, static_cast<int>(p.n));
    return out;
  }

  int64_t flops(const std::vector<Shape>& in, const Shape& out) const override {
    const int64_t k = plan(in[0], in[1]).k;
    return checkedMul(2 * elementCount(out), k,
                      "the FLOP count of " + shapeToString(out) + " outputs of " + std::to_string(k) + " products");
  }

 private:
  struct Plan {
    Shape aShape, bShape;          // operands with rank-1 promotion applied
    Shape batch;                   // broadcast leading axes
    Shape aBroadcast, bBroadcast;  // batch + matrix
    Shape out;
    int64_t m, k, n;
  };

  static Tensor reshaped(Tensor t, const Shape& shape) {
    t.reshape(shape);
    return t;
  }

  static Plan plan(const Shape& a0, const Shape& b0) {
    if (a0.empty() || b0.empty()) throw Error("MatMul operands must have rank 1 or more");
    Plan p;
    p.aShape = a0.size() == 1 ? Shape{1, a0[0]} : a0;
    p.bShape = b0.size() == 1 ? Shape{b0[0], 1} : b0;
    p.m = p.aShape[p.aShape.size() - 2];
    p.k = p.aShape.back();
    p.n = p.bShape.back();
    if (p.bShape[p.bShape.size() - 2] != p.k)
      throw Error("operands " + shapeToString(a0) + " and " + shapeToString(b0) + " have inner dimensions " +
                  std::to_string(p.k) + " and " + std::to_string(p.bShape[p.bShape.size() - 2]));
    p.batch = broadcastShape(Shape(p.aShape.begin(), p.aShape.end() - 2), Shape(p.bShape.begin(), p.bShape.end() - 2));
    p.aBroadcast = p.batch;
    p.aBroadcast.insert(p.aBroadcast.end(), {p.m, p.k});
    p.bBroadcast = p.batch;
    p.bBroadcast.insert(p.bBroadcast.end(), {p.k, p.n});
    p.out = p.batch;
    if (a0.size() > 1) p.out.push_back(p.m);
    if (b0.size() > 1) p.out.push_back(p.n);
    return p;
  }
};

}  // namespace

std::unique_ptr<Operator> makeGemm(OperatorRequest& request) {
  requireInputCount(request, 2, 3);
  Attributes& a = request.attributes;
  const int64_t transA = a.getInt("transA", 0);
  const int64_t transB = a.getInt("transB", 0);
  if ((transA != 0 && transA != 1) || (transB != 0 && transB != 1)) throw Error("transA and transB must be 0 or 1");
  return std::make_unique<GemmOp>(transA == 1, transB == 1, a.getFloat("alpha", 1.0f), a.getFloat("beta", 1.0f));
}

std::unique_ptr<Operator> makeMatMul(OperatorRequest& request) {
  requireInputCount(request, 2, 2);
  return std::make_unique<MatMulOp>();
}

}  // namespace convscope::ops
