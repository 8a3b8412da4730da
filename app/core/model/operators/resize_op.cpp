// Resize (and the older Upsample): what nn.Upsample and F.interpolate export to, nearest and
// bilinear, on N x C x H x W maps. The scales or output sizes must be constants known when the
// model loads (both PyTorch exporters write them so); each output row and column maps back to the
// input through the node's coordinate_transformation_mode, as ONNX defines it. Cubic
// interpolation, crop-and-resize and antialiasing are refused when the model loads.
#include <algorithm>
#include <cmath>

#include "app/core/model/operators/operator_families.h"
#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

// A size that is the input's own (the batch, known at run time only).
constexpr int64_t kSameAsInput = -1;

enum class Transform { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNearest };
enum class Rounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

struct ResizeRule {
  bool linear = false;
  Transform transform = Transform::HalfPixel;
  Rounding rounding = Rounding::RoundPreferFloor;
  std::vector<float> scales;   // one per axis, or empty when sizes are given
  std::vector<int64_t> sizes;  // one per axis, or empty when scales are given
};

class ResizeOp final : public Operator {
 public:
  explicit ResizeOp(ResizeRule rule) : rule_(std::move(rule)) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    const Shape& x = in[0];
    if (x.size() != 4) throw Error("input " + shapeToString(x) + " is not N x C x H x W; only 2-D maps are resized");
    const size_t given = rule_.sizes.empty() ? rule_.scales.size() : rule_.sizes.size();
    if (given != 4)
      throw Error(std::string(rule_.sizes.empty() ? "scales" : "sizes") + " hold " + std::to_string(given) +
                  " values for an input of rank 4");
    Shape out(4);
    for (size_t d = 0; d < 4; ++d) {
      if (!rule_.sizes.empty()) {
        out[d] = rule_.sizes[d] == kSameAsInput ? x[d] : rule_.sizes[d];
      } else {
        const double size = std::floor(double{rule_.scales[d]} * double(x[d]));
        if (size > double(int64_t{1} << 24)) throw Error("the resized shape is absurdly large");
        out[d] = static_cast<int64_t>(size);
      }
      if (out[d] < 1 || out[d] > (int64_t{1} << 24))
        throw Error("the resized shape of " + shapeToString(x) + " has an invalid dimension " + std::to_string(out[d]));
    }
    if (out[0] != x[0] || out[1] != x[1])
      throw Error("only the spatial axes may be resized; the scales or sizes change the batch or channel axis of " +
                  shapeToString(x));
    return out;
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    const Shape out = outputShape({x.shape()});
    const int64_t planes = out[0] * out[1];
    const int64_t inH = x.shape()[2], inW = x.shape()[3], outH = out[2], outW = out[3];
    const std::vector<Tap> rows = taps(inH, outH, 2);
    const std::vector<Tap> cols = taps(inW, outW, 3);
    Tensor y(out);
#pragma omp parallel for schedule(static) if (y.size() > 16384)
    for (int64_t p = 0; p < planes; ++p) {
      const float* src = x.data() + p * inH * inW;
      float* dst = y.data() + p * outH * outW;
      for (int64_t h = 0; h < outH; ++h) {
        const Tap& r = rows[static_cast<size_t>(h)];
        for (int64_t w = 0; w < outW; ++w) {
          const Tap& c = cols[static_cast<size_t>(w)];
          if (!rule_.linear) {
            dst[h * outW + w] = src[r.first * inW + c.first];
            continue;
          }
          const double top = (1.0 - c.weight) * src[r.first * inW + c.first] + c.weight * src[r.first * inW + c.second];
          const double bottom =
              (1.0 - c.weight) * src[r.second * inW + c.first] + c.weight * src[r.second * inW + c.second];
          dst[h * outW + w] = static_cast<float>((1.0 - r.weight) * top + r.weight * bottom);
        }
      }
    }
    return y;
  }

  int64_t flops(const std::vector<Shape>&, const Shape& out) const override {
    return rule_.linear ? 6 * elementCount(out) : 0;
  }

 private:
  // Where output index i of an axis reads: the nearest input index (first), or the two
  // neighbours and the weight of the second.
  struct Tap {
    int64_t first = 0, second = 0;
    double weight = 0.0;
  };

  std::vector<Tap> taps(int64_t in, int64_t out, size_t axis) const {
    // With sizes given, ONNX takes the scale as out / in.
    const double scale = rule_.sizes.empty() ? double{rule_.scales[axis]} : double(out) / double(in);
    std::vector<Tap> result(static_cast<size_t>(out));
    for (int64_t i = 0; i < out; ++i) {
      double x = 0.0;
      switch (rule_.transform) {
        case Transform::HalfPixel:
          x = (i + 0.5) / scale - 0.5;
          break;
        case Transform::PytorchHalfPixel:
          x = out > 1 ? (i + 0.5) / scale - 0.5 : 0.0;
          break;
        case Transform::AlignCorners: {
          // ONNX takes the resized length as in * scale, before rounding down (the same as the
          // output size for PyTorch's integral scales).
          const double resized = rule_.sizes.empty() ? double(in) * scale : double(out);
          x = resized == 1.0 ? 0.0 : double(i) * double(in - 1) / (resized - 1.0);
          break;
        }
        case Transform::Asymmetric:
          x = i / scale;
          break;
        case Transform::TfHalfPixelForNearest:
          x = (i + 0.5) / scale;
          break;
      }
      Tap& t = result[static_cast<size_t>(i)];
      if (!rule_.linear) {
        double n = 0.0;
        switch (rule_.rounding) {
          case Rounding::RoundPreferFloor:
            n = x == std::floor(x) + 0.5 ? std::floor(x) : std::round(x);
            break;
          case Rounding::RoundPreferCeil:
            n = x == std::floor(x) + 0.5 ? std::ceil(x) : std::round(x);
            break;
          case Rounding::Floor:
            n = std::floor(x);
            break;
          case Rounding::Ceil:
            n = std::ceil(x);
            break;
        }
        t.first = std::clamp<int64_t>(static_cast<int64_t>(n), 0, in - 1);
        continue;
      }
      // Outside the input, the edge value (ONNX pads with the edge; PyTorch clamps the same way).
      x = std::clamp(x, 0.0, double(in - 1));
      t.first = static_cast<int64_t>(std::floor(x));
      t.second = std::min(t.first + 1, in - 1);
      t.weight = x - double(t.first);
    }
    return result;
  }

  ResizeRule rule_;
};

Transform transformOf(const std::string& mode) {
  if (mode == "half_pixel") return Transform::HalfPixel;
  if (mode == "pytorch_half_pixel") return Transform::PytorchHalfPixel;
  if (mode == "align_corners") return Transform::AlignCorners;
  if (mode == "asymmetric") return Transform::Asymmetric;
  if (mode == "tf_half_pixel_for_nn") return Transform::TfHalfPixelForNearest;
  throw Error("coordinate_transformation_mode '" + mode +
              "' is not supported (half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn)");
}

Rounding roundingOf(const std::string& mode) {
  if (mode == "round_prefer_floor") return Rounding::RoundPreferFloor;
  if (mode == "round_prefer_ceil") return Rounding::RoundPreferCeil;
  if (mode == "floor") return Rounding::Floor;
  if (mode == "ceil") return Rounding::Ceil;
  throw Error("nearest_mode '" + mode + "' is not valid (round_prefer_floor, round_prefer_ceil, floor, ceil)");
}

bool linearMode(const std::string& mode) {
  if (mode == "nearest") return false;
  if (mode == "linear" || mode == "bilinear") return true;
  if (mode == "cubic") throw Error("mode cubic is not supported (only nearest and linear)");
  throw Error("mode '" + mode + "' is not valid (nearest or linear)");
}

// The scales input: a float constant of positive finite values.
std::vector<float> constantScales(OperatorRequest& request, const std::string& name) {
  const Tensor* scales = request.floatConstant(name);
  if (!scales) throw Error("the scales '" + name + "' are computed at run time; only constant scales are supported");
  std::vector<float> values(scales->data(), scales->data() + scales->size());
  for (float s : values)
    if (!(s > 0.0f) || !std::isfinite(s)) throw Error("the scales '" + name + "' must be positive and finite");
  return values;
}

}  // namespace

std::unique_ptr<Operator> makeResize(OperatorRequest& request) {
  Attributes& a = request.attributes;
  std::vector<std::string>& inputs = request.inputs;
  if (inputs.empty() || inputs[0].empty()) throw Error("takes an input X");
  if (inputs.size() > 4) throw Error("takes 1 to 4 inputs, got " + std::to_string(inputs.size()));
  ResizeRule rule;
  rule.linear = linearMode(a.getString("mode", "nearest"));
  if (request.opset >= 11) {
    rule.transform = transformOf(a.getString("coordinate_transformation_mode", "half_pixel"));
    rule.rounding = roundingOf(a.getString("nearest_mode", "round_prefer_floor"));
    a.getFloat("cubic_coeff_a", -0.75f);      // cubic mode only
    a.getFloat("extrapolation_value", 0.0f);  // tf_crop_and_resize only
    if (a.getInt("exclude_outside", 0) != 0) throw Error("attribute exclude_outside=1 is not supported");
  } else {
    // Opset 10: the coordinates were asymmetric, nearest rounded down.
    rule.transform = Transform::Asymmetric;
    rule.rounding = Rounding::Floor;
  }
  if (a.getInt("antialias", 0) != 0) throw Error("attribute antialias=1 is not supported");
  if (a.has("axes")) {
    const std::vector<int64_t> axes = a.getInts("axes", {});
    if (axes != std::vector<int64_t>{0, 1, 2, 3})
      throw Error("attribute axes is not supported (the scales or sizes must cover every axis)");
  }
  const std::string policy = a.getString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") throw Error("keep_aspect_ratio_policy '" + policy + "' is not supported (only stretch)");

  const auto given = [&](size_t k) { return inputs.size() > k && !inputs[k].empty(); };
  if (request.opset < 11) {
    if (!given(1) || inputs.size() != 2) throw Error("takes 2 inputs (X, scales)");
    rule.scales = constantScales(request, inputs[1]);
  } else {
    // X, roi, scales, sizes: roi matters only for tf_crop_and_resize, which is refused above.
    if (given(2) == given(3)) {
      const bool emptyScales =
          given(2) && request.floatConstant(inputs[2]) && request.floatConstant(inputs[2])->size() == 0;
      if (!emptyScales || !given(3)) throw Error("exactly one of scales and sizes must be given");
    }
    if (given(3)) {
      if (const std::vector<int64_t>* sizes = request.intConstant(inputs[3])) {
        for (int64_t size : *sizes)
          if (size < 1)
            throw Error("the sizes '" + inputs[3] + "' hold " + std::to_string(size) + "; sizes are at least 1");
        rule.sizes = *sizes;
      } else if (const std::vector<ShapeElement>* expression = request.shapeExpression(inputs[3])) {
        // F.interpolate(size=...) exports Concat(Shape(x)[0:2], [H, W]): the batch is known only at
        // run time, but it is x's own, which Resize keeps.
        for (size_t d = 0; d < expression->size(); ++d) {
          const ShapeElement& e = (*expression)[d];
          if (e.value) {
            rule.sizes.push_back(*e.value);
          } else if (e.tensor == inputs[0] && e.axis == static_cast<int>(d) && d < 2) {
            rule.sizes.push_back(kSameAsInput);
          } else {
            throw Error("the sizes '" + inputs[3] + "' depend on the batch size in a way ConvScope cannot resolve");
          }
        }
      } else {
        throw Error("the sizes '" + inputs[3] + "' are computed at run time; only constant sizes are supported");
      }
    } else {
      rule.scales = constantScales(request, inputs[2]);
    }
  }
  inputs.resize(1);  // roi, scales and sizes are consumed here, not runtime inputs
  return std::make_unique<ResizeOp>(std::move(rule));
}

std::unique_ptr<Operator> makeUpsample(OperatorRequest& request) {
  // Upsample (deprecated since opset 10): Resize with asymmetric coordinates, nearest rounding down.
  Attributes& a = request.attributes;
  ResizeRule rule;
  rule.linear = linearMode(a.getString("mode", "nearest"));
  rule.transform = Transform::Asymmetric;
  rule.rounding = Rounding::Floor;
  if (a.has("scales")) {
    throw Error("attribute scales (Upsample before opset 9) is not supported; export with opset 13 or later");
  }
  requireInputCount(request, 2, 2);
  rule.scales = constantScales(request, request.inputs[1]);
  request.inputs.resize(1);
  return std::make_unique<ResizeOp>(std::move(rule));
}

}  // namespace convscope::ops
