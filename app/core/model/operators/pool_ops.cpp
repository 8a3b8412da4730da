// MaxPool and AveragePool over 2-D windows, one (image, channel) plane per thread; the window
// arithmetic is poolPlanes() (util/host_epilogue.h), shared with the CPU variants' fused epilogues.
#include "app/core/model/operators/operator_families.h"
#include "app/core/model/operators/window2d.h"
#include "app/core/util/error.h"
#include "app/core/util/host_epilogue.h"

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
    Tensor out = Tensor::uninitialized(outputShape({x.shape()}));
    const PoolGeometry g = geometry(x.shape());
    const bool max = isMax();
#pragma omp parallel for schedule(static) if (g.planes * g.inHeight * g.inWidth > 16384)
    for (int64_t plane = 0; plane < g.planes; ++plane) poolPlanes(g, max, x.data(), out.data(), plane, 1);
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
