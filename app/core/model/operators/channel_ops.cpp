// Operators over channels and axes that students' CNNs bring: BatchNormalization where the
// exporter could not fold it into a Conv (after an activation, after a Linear), the averages that
// AdaptiveAvgPool exports to (GlobalAveragePool, ReduceMean), and Concat. Sums run in double, so
// an average over a large map is as exact as PyTorch's. They have no GPU kernel: on a GPU plan
// they are host round trips, which the plan shows.
#include <algorithm>
#include <cmath>
#include <set>

#include "app/core/model/operators/operator_families.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

// Y = (X - mean) / sqrt(var + epsilon) * scale + B, per channel (axis 1), with the statistics
// stored in the model (inference mode).
class BatchNormalizationOp final : public Operator {
 public:
  explicit BatchNormalizationOp(float epsilon) : epsilon_(epsilon) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    const Shape& x = in[0];
    if (x.size() < 2) throw Error("input " + shapeToString(x) + " has no channel axis (rank below 2)");
    const char* names[] = {"scale", "B", "mean", "var"};
    for (size_t k = 1; k < 5; ++k)
      if (in[k] != Shape{x[1]})
        throw Error(std::string(names[k - 1]) + " " + shapeToString(in[k]) + " does not match the input's " +
                    std::to_string(x[1]) + " channels; it must have shape [" + std::to_string(x[1]) + "]");
    return x;
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    const int64_t images = x.shape()[0];
    const int64_t channels = x.shape()[1];
    const int64_t plane = channels == 0 || images == 0 ? 0 : x.size() / (images * channels);
    Tensor out = Tensor::uninitialized(x.shape());
#pragma omp parallel for collapse(2) schedule(static) if (x.size() > 16384)
    for (int64_t n = 0; n < images; ++n)
      for (int64_t c = 0; c < channels; ++c) {
        const double scale = (*in[1])[c] / std::sqrt(double{(*in[4])[c]} + epsilon_);
        const double mean = (*in[3])[c];
        const double shift = (*in[2])[c];
        const float* src = x.data() + (n * channels + c) * plane;
        float* dst = out.data() + (n * channels + c) * plane;
        for (int64_t i = 0; i < plane; ++i) dst[i] = static_cast<float>((src[i] - mean) * scale + shift);
      }
    return out;
  }

  int64_t flops(const std::vector<Shape>&, const Shape& out) const override {
    return 2 * elementCount(out);
  }

 private:
  float epsilon_;
};

// The mean over `axes` (sorted, distinct, non-negative), kept as size-1 axes or dropped.
class MeanOverAxesOp final : public Operator {
 public:
  // axes empty: every axis (ReduceMean's default); `spatial`: every axis from 2 on
  // (GlobalAveragePool); `identity`: ReduceMean's noop_with_empty_axes with no axes.
  MeanOverAxesOp(std::vector<int64_t> axes, bool keepDims, bool spatial, bool identity)
      : axes_(std::move(axes)), keepDims_(keepDims), spatial_(spatial), identity_(identity) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    if (identity_) return in[0];
    const std::vector<bool> reduced = reducedAxes(in[0]);
    Shape out;
    for (size_t d = 0; d < in[0].size(); ++d)
      if (!reduced[d])
        out.push_back(in[0][d]);
      else if (keepDims_)
        out.push_back(1);
    return out;
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    if (identity_) return x;
    const Shape& shape = x.shape();
    const std::vector<bool> reduced = reducedAxes(shape);
    // Each input element adds to the output element with its reduced coordinates set to 0.
    std::vector<int64_t> outStrides(shape.size(), 0);
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;)
      if (!reduced[d]) {
        outStrides[d] = stride;
        stride *= shape[d];
      }
    const int64_t outCount = stride;
    const int64_t perOutput = outCount == 0 ? 0 : x.size() / outCount;
    Tensor out = Tensor::uninitialized(outputShape({shape}));
    if (reducesTrailingAxes(reduced) && perOutput > 0) {
      // A global average pooling (NCHW over H and W): each output is the mean of one contiguous
      // run, summed in the order the general loop below would sum it.
      const float* values = x.data();
#pragma omp parallel for schedule(static) if (x.size() >= (int64_t{1} << 16))
      for (int64_t o = 0; o < outCount; ++o) {
        double sum = 0.0;
        for (const float *v = values + o * perOutput, *end = v + perOutput; v < end; ++v) sum += *v;
        out[o] = static_cast<float>(sum / double(perOutput));
      }
      return out;
    }
    std::vector<double> sums(static_cast<size_t>(outCount), 0.0);
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t i = 0; i < x.size(); ++i) {
      int64_t o = 0;
      for (size_t d = 0; d < shape.size(); ++d) o += index[d] * outStrides[d];
      sums[static_cast<size_t>(o)] += x[i];
      for (size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
    for (int64_t o = 0; o < outCount; ++o)
      out[o] = perOutput == 0 ? NAN : static_cast<float>(sums[static_cast<size_t>(o)] / double(perOutput));
    return out;
  }

 private:
  // Whether the reduced axes are the last ones (and at least one is), all others kept.
  static bool reducesTrailingAxes(const std::vector<bool>& reduced) {
    const auto firstReduced = std::find(reduced.begin(), reduced.end(), true);
    return firstReduced != reduced.end() && std::find(firstReduced, reduced.end(), false) == reduced.end();
  }

  std::vector<bool> reducedAxes(const Shape& x) const {
    const int rank = static_cast<int>(x.size());
    if (spatial_ && rank < 3) throw Error("input " + shapeToString(x) + " has no spatial axes (rank below 3)");
    std::vector<bool> reduced(x.size(), axes_.empty() && !spatial_);
    if (spatial_)
      for (int d = 2; d < rank; ++d) reduced[static_cast<size_t>(d)] = true;
    for (int64_t axis : axes_) reduced[static_cast<size_t>(normalizeAxis(axis, rank, "axis"))] = true;
    std::set<int> seen;
    for (int64_t axis : axes_)
      if (!seen.insert(normalizeAxis(axis, rank, "axis")).second)
        throw Error("axis " + std::to_string(axis) + " is given twice");
    return reduced;
  }

  std::vector<int64_t> axes_;
  bool keepDims_;
  bool spatial_;
  bool identity_;
};

class ConcatOp final : public Operator {
 public:
  explicit ConcatOp(int64_t axis) : axis_(axis) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    const int rank = static_cast<int>(in[0].size());
    if (rank == 0) throw Error("a scalar cannot be concatenated");
    const int axis = normalizeAxis(axis_, rank, "axis");
    Shape out = in[0];
    out[static_cast<size_t>(axis)] = 0;
    for (const Shape& s : in) {
      bool matches = static_cast<int>(s.size()) == rank;
      for (int d = 0; matches && d < rank; ++d) matches = d == axis || s[d] == in[0][d];
      if (!matches)
        throw Error("inputs " + shapeToString(in[0]) + " and " + shapeToString(s) +
                    " differ outside the concatenation axis " + std::to_string(axis));
      out[static_cast<size_t>(axis)] =
          checkedAdd(out[static_cast<size_t>(axis)], s[static_cast<size_t>(axis)], "the concatenated shape");
    }
    return out;
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    std::vector<Shape> shapes;
    for (const Tensor* t : in) shapes.push_back(t->shape());
    const Shape shape = outputShape(shapes);
    const int axis = normalizeAxis(axis_, static_cast<int>(shape.size()), "axis");
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    Tensor out(shape);
    float* dst = out.data();
    // Row by row of the outer axes: each input's block along the axis, in input order.
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor* t : in) {
        const int64_t block = t->shape()[static_cast<size_t>(axis)] * inner;
        std::copy_n(t->data() + o * block, block, dst);
        dst += block;
      }
    return out;
  }

  int64_t flops(const std::vector<Shape>&, const Shape&) const override { return 0; }

 private:
  int64_t axis_;
};

}  // namespace

std::unique_ptr<Operator> makeBatchNormalization(OperatorRequest& request) {
  requireInputCount(request, 5, 5);
  Attributes& a = request.attributes;
  if (a.getInt("training_mode", 0) != 0)
    throw Error("attribute training_mode=1 is not supported (only inference: export the model in eval mode)");
  if (a.getInt("spatial", 1) != 1) throw Error("attribute spatial=0 is not supported");
  a.getInt("is_test", 1);        // opsets before 7: inference is all ConvScope runs
  a.getFloat("momentum", 0.9f);  // updates the running statistics in training only
  const float epsilon = a.getFloat("epsilon", 1e-5f);
  if (!(epsilon >= 0.0f) || !std::isfinite(epsilon))
    throw Error("attribute epsilon must be a finite number, at least 0");
  return std::make_unique<BatchNormalizationOp>(epsilon);
}

std::unique_ptr<Operator> makeGlobalAveragePool(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  return std::make_unique<MeanOverAxesOp>(std::vector<int64_t>{}, true, true, false);
}

std::unique_ptr<Operator> makeReduceMean(OperatorRequest& request) {
  Attributes& a = request.attributes;
  const int64_t keepDims = a.getInt("keepdims", 1);
  if (keepDims != 0 && keepDims != 1) throw Error("attribute keepdims must be 0 or 1");
  std::vector<int64_t> axes;
  bool noopWithEmptyAxes = false;
  if (request.opset >= 18) {
    // Opset 18 moved the axes into an optional int64 input, which must be a constant here.
    requireInputCount(request, 1, 2);
    const int64_t noop = a.getInt("noop_with_empty_axes", 0);
    if (noop != 0 && noop != 1) throw Error("attribute noop_with_empty_axes must be 0 or 1");
    noopWithEmptyAxes = noop == 1;
    if (request.inputs.size() == 2) {
      const std::vector<int64_t>* constant = request.intConstant(request.inputs[1]);
      if (!constant)
        throw Error("the axes '" + request.inputs[1] + "' are computed at run time; only constant axes are supported");
      axes = *constant;
      request.inputs.pop_back();  // consumed here, not a runtime input
    }
  } else {
    requireInputCount(request, 1, 1);
    axes = a.getInts("axes", {});
  }
  const bool identity = noopWithEmptyAxes && axes.empty();
  return std::make_unique<MeanOverAxesOp>(std::move(axes), keepDims == 1, false, identity);
}

std::unique_ptr<Operator> makeConcat(OperatorRequest& request) {
  requireInputCount(request, 1, 1 << 16);
  if (!request.attributes.has("axis")) throw Error("attribute axis is required");
  return std::make_unique<ConcatOp>(request.attributes.getInt("axis", 0));
}

}  // namespace convscope::ops
