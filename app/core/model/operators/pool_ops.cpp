// MaxPool and AveragePool over 2-D windows, one (image, channel) plane per thread.
#include <algorithm>
#include <limits>

#include "app/core/model/operators/operator_families.h"
#include "app/core/model/operators/window2d.h"
#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

class PoolOp : public Operator {
 public:
  explicit PoolOp(Window2d window) : window_(window) {}

  Shape outputShape(const std::vector<Shape>& in) const override {
    if (in[0].size() != 4)
      throw Error("input shape " + shapeToString(in[0]) + " is not N x C x H x W; only 2-D pooling is supported");
    if (in[0][2] > (int64_t{1} << 24) || in[0][3] > (int64_t{1} << 24))
      throw Error("input shape " + shapeToString(in[0]) + " is too large");
    const Window2d::Resolved r = resolve(in[0]);
    return {in[0][0], in[0][1], r.outHeight, r.outWidth};
  }

  Tensor run(const std::vector<const Tensor*>& in, ConvExecutor&) const override {
    const Tensor& x = *in[0];
    Tensor out(outputShape({x.shape()}));
    const Window2d::Resolved r = resolve(x.shape());
    const int height = static_cast<int>(x.dim(2));
    const int width = static_cast<int>(x.dim(3));
    const int64_t planes = x.dim(0) * x.dim(1);
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float* src = x.data() + plane * height * width;
      float* dst = out.data() + plane * r.outHeight * r.outWidth;
      for (int oy = 0; oy < r.outHeight; ++oy)
        for (int ox = 0; ox < r.outWidth; ++ox) {
          const int y0 = oy * window_.strideHeight - r.padTop;
          const int x0 = ox * window_.strideWidth - r.padLeft;
          dst[oy * r.outWidth + ox] = poolWindow(src, height, width, y0, x0, r);
        }
    }
    return out;
  }

  bool hasDeviceKernel() const override {
    return true;
  }

  DeviceTensor runOnDevice(const std::vector<const DeviceTensor*>& in, DeviceRun& run) const override {
    DeviceTensor out = run.device.allocate(outputShape({in[0]->shape}));
    PoolGeometry g = geometry(in[0]->shape);
    poolOnDevice(run.device, g, in[0]->data(), out.data());
    return out;
  }

  std::optional<EpilogueStep> asEpilogueStep(const Shape& input) const override {
    outputShape({input});  // the shape checks
    EpilogueStep step;
    step.isPool = true;
    step.maxPool = isMax();
    step.pool = geometry(input);
    return step;
  }

 protected:
  virtual bool isMax() const = 0;
  virtual bool countsPadding() const {
    return false;
  }

  PoolGeometry geometry(const Shape& x) const {
    const Window2d::Resolved r = resolve(x);
    PoolGeometry g;
    g.planes = x[0] * x[1];
    g.inHeight = static_cast<int>(x[2]);
    g.inWidth = static_cast<int>(x[3]);
    g.outHeight = r.outHeight;
    g.outWidth = r.outWidth;
    g.kernelHeight = window_.kernelHeight;
    g.kernelWidth = window_.kernelWidth;
    g.strideHeight = window_.strideHeight;
    g.strideWidth = window_.strideWidth;
    g.padTop = r.padTop;
    g.padLeft = r.padLeft;
    g.padBottom = r.padBottom;
    g.padRight = r.padRight;
    g.countIncludePad = countsPadding();
    return g;
  }

  virtual void poolOnDevice(Device& device, PoolGeometry& g, const float* in, float* out) const = 0;
  // y0, x0: top-left of the window in input coordinates (may be negative inside the padding).
  virtual float poolWindow(const float* src, int height, int width, int y0, int x0,
                           const Window2d::Resolved& r) const = 0;
  Window2d window_;

 private:
  Window2d::Resolved resolve(const Shape& x) const {
    return window_.resolve(static_cast<int>(x[2]), static_cast<int>(x[3]), window_.kernelHeight, window_.kernelWidth);
  }
};

class MaxPoolOp final : public PoolOp {
 public:
  using PoolOp::PoolOp;

 protected:
  bool isMax() const override { return true; }
  void poolOnDevice(Device& device, PoolGeometry& g, const float* in, float* out) const override {
    device.maxPool(g, in, out);
  }

  float poolWindow(const float* src, int height, int width, int y0, int x0, const Window2d::Resolved&) const override {
    float best = -std::numeric_limits<float>::infinity();
    for (int y = std::max(y0, 0); y < std::min(y0 + window_.kernelHeight, height); ++y)
      for (int x = std::max(x0, 0); x < std::min(x0 + window_.kernelWidth, width); ++x)
        best = std::max(best, src[y * width + x]);
    return best;
  }
};

class AveragePoolOp final : public PoolOp {
 public:
  AveragePoolOp(Window2d window, bool countIncludePad) : PoolOp(window), countIncludePad_(countIncludePad) {}

 protected:
  bool isMax() const override { return false; }
  bool countsPadding() const override { return countIncludePad_; }
  void poolOnDevice(Device& device, PoolGeometry& g, const float* in, float* out) const override {
    device.averagePool(g, in, out);
  }

  float poolWindow(const float* src, int height, int width, int y0, int x0,
                   const Window2d::Resolved& r) const override {
    const int yEnd = std::min(y0 + window_.kernelHeight, height);
    const int xEnd = std::min(x0 + window_.kernelWidth, width);
    float sum = 0.0f;
    for (int y = std::max(y0, 0); y < yEnd; ++y)
      for (int x = std::max(x0, 0); x < xEnd; ++x) sum += src[y * width + x];
    int count;
    if (countIncludePad_) {
      // The window clipped to the padded input, as PyTorch and the ONNX reference count it.
      const int yPadEnd = std::min(y0 + window_.kernelHeight, height + r.padBottom);
      const int xPadEnd = std::min(x0 + window_.kernelWidth, width + r.padRight);
      count = (yPadEnd - y0) * (xPadEnd - x0);
    } else {
      count = (yEnd - std::max(y0, 0)) * (xEnd - std::max(x0, 0));
    }
    return count > 0 ? sum / static_cast<float>(count) : 0.0f;
  }

 private:
  bool countIncludePad_;
};

}  // namespace

std::unique_ptr<Operator> makeMaxPool(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  if (request.attributes.getInt("storage_order", 0) != 0) throw Error("attribute storage_order=1 is not supported");
  return std::make_unique<MaxPoolOp>(Window2d::read(request.attributes, true, true));
}

std::unique_ptr<Operator> makeAveragePool(OperatorRequest& request) {
  requireInputCount(request, 1, 1);
  const int64_t includePad = request.attributes.getInt("count_include_pad", 0);
  if (includePad != 0 && includePad != 1) throw Error("count_include_pad must be 0 or 1");
  return std::make_unique<AveragePoolOp>(Window2d::read(request.attributes, true, true), includePad == 1);
}

}  // namespace convscope::ops
