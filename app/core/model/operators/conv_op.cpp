// Conv: the layer the whole course is about. Shapes and bias live here; the multiply-accumulate
// itself goes to the selected conv backend through the engine's ConvExecutor. Grouped (depthwise)
// and dilated convolutions are ConvProblems too: the variants that cannot compute them decline
// them, and the plan shows who runs them instead.
#include "app/core/model/operators/operator_families.h"
#include "app/core/model/operators/window2d.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

class ConvOp final : public Operator {
 public:
  ConvOp(Window2d window, int group) : window_(window), group_(group) {}

  Shape outputShape(const std::vector<Shape>& in) const override { return shapeOf(problem(in)); }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor& conv) const override {
    std::vector<Shape> shapes;
    for (const Tensor* t : in) shapes.push_back(t->shape());
    const ConvProblem p = problem(shapes);
    Tensor out = Tensor::uninitialized(shapeOf(p));  // the backend writes every element
    conv.convolve(p, in[0]->data(), in[1]->data(), out.data());
    if (in.size() > 2) {
      const float* bias = in[2]->data();
      const int64_t plane = int64_t{p.outHeight()} * p.outWidth();
      float* y = out.data();
#pragma omp parallel for collapse(2) schedule(static)
      for (int n = 0; n < p.batch; ++n)
        for (int m = 0; m < p.outChannels; ++m) {
          float* row = y + (int64_t{n} * p.outChannels + m) * plane;
          for (int64_t i = 0; i < plane; ++i) row[i] += bias[m];
        }
    }
    return out;
  }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun& run) const override {
    std::vector<Shape> shapes;
    for (const DeviceTensor* t : in) shapes.push_back(t->shape);
    const ConvProblem p = problem(shapes);
    DeviceTensor out = run.device.allocate(shapeOf(p));
    run.convolve(p, in[0]->data(), in[1]->data(), out.data());
    if (in.size() > 2)
      run.device.addChannelBias(out.data(), in[2]->data(), p.batch, p.outChannels,
                                int64_t{p.outHeight()} * p.outWidth());
    return out;
  }

  bool hasDeviceKernel() const override {
    return true;
  }

  std::optional<ConvProblem> convProblem(const std::vector<Shape>& in) const override {
    return problem(in);
  }

  int64_t flops(const std::vector<Shape>& in, const Shape& out) const override {
    // Every factor is checked: the dimensions may each be up to 2^24.
    const ConvProblem p = problem(in);
    const std::string what = "the FLOP count of " + p.describe();
    int64_t flops = checkedMul(2, elementCount(out), what);
    for (int64_t factor : {int64_t{p.inChannelsPerGroup()}, int64_t{p.kernelHeight}, int64_t{p.kernelWidth}})
      flops = checkedMul(flops, factor, what);
    return checkedAdd(flops, in.size() > 2 ? elementCount(out) : 0, what);
  }

 private:
  static Shape shapeOf(const ConvProblem& p) {
    return {p.batch, p.outChannels, p.outHeight(), p.outWidth()};
  }

  ConvProblem problem(const std::vector<Shape>& in) const {
    const Shape& x = in[0];
    const Shape& w = in[1];
    if (x.size() != 4)
      throw Error("input shape " + shapeToString(x) + " is not N x C x H x W; only 2-D convolution is supported");
    requireRank(w, 4, "weights");
    for (const Shape* s : {&x, &w})
      for (int64_t d : *s)
        if (d > (int64_t{1} << 24))
          throw Error("dimension " + std::to_string(d) + " of " + shapeToString(*s) + " is too large");
    if (x[1] % group_ != 0 || w[0] % group_ != 0)
      throw Error("group " + std::to_string(group_) + " does not divide the input's " + std::to_string(x[1]) +
                  " channels and the weights' " + std::to_string(w[0]) + " filters");
    if (w[1] * group_ != x[1])
      throw Error("weights " + shapeToString(w) + " expect " + std::to_string(w[1] * group_) + " input channels (" +
                  std::to_string(w[1]) + " per group, group " + std::to_string(group_) + ") but the input " +
                  shapeToString(x) + " has " + std::to_string(x[1]));
    if (window_.kernelHeight && (w[2] != window_.kernelHeight || w[3] != window_.kernelWidth))
      throw Error("kernel_shape does not match the weights " + shapeToString(w));
    // The bias is read as bias[m] for every output channel m: it must be exactly [M]. A scalar
    // ([]) or [1] would be read past its end.
    if (in.size() > 2 && (in[2].size() != 1 || in[2][0] != w[0]))
      throw Error("bias " + shapeToString(in[2]) + " does not match " + std::to_string(w[0]) +
                  " output channels; it must have shape [" + std::to_string(w[0]) + "]");
    // The window spans (k - 1) * dilation + 1 input pixels; the pads and the output size follow it.
    const int64_t extentH = (w[2] - 1) * window_.dilationHeight + 1;
    const int64_t extentW = (w[3] - 1) * window_.dilationWidth + 1;
    if (extentH > (int64_t{1} << 24) || extentW > (int64_t{1} << 24))
      throw Error("the dilated kernel of " + shapeToString(w) + " is too large");
    const Window2d::Resolved r = window_.resolve(static_cast<int>(x[2]), static_cast<int>(x[3]),
                                                 static_cast<int>(extentH), static_cast<int>(extentW));
    ConvProblem p;
    p.batch = static_cast<int>(x[0]);
    p.inChannels = static_cast<int>(x[1]);
    p.inHeight = static_cast<int>(x[2]);
    p.inWidth = static_cast<int>(x[3]);
    p.outChannels = static_cast<int>(w[0]);
    p.kernelHeight = static_cast<int>(w[2]);
    p.kernelWidth = static_cast<int>(w[3]);
    p.strideHeight = window_.strideHeight;
    p.strideWidth = window_.strideWidth;
    p.padTop = r.padTop;
    p.padLeft = r.padLeft;
    p.padBottom = r.padBottom;
    p.padRight = r.padRight;
    p.group = group_;
    p.dilationHeight = window_.dilationHeight;
    p.dilationWidth = window_.dilationWidth;
    return p;
  }

  Window2d window_;
  int group_;
};

}  // namespace

std::unique_ptr<Operator> makeConv(OperatorRequest& request) {
  requireInputCount(request, 2, 3);
  const int64_t group = request.attributes.getInt("group", 1);
  if (group < 1 || group > (int64_t{1} << 24))
    throw Error("attribute group=" + std::to_string(group) + " is invalid (it must be at least 1)");
  return std::make_unique<ConvOp>(Window2d::read(request.attributes, false, false, true), static_cast<int>(group));
}

}  // namespace convscope::ops
