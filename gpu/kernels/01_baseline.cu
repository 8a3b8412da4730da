// Course step 1, the baseline: the first GPU convolution. One thread computes one output element and
// reads every input pixel and weight it needs straight from global memory; the GPU wins over the
// CPU by running hundreds of thousands of these threads at once. Every shape (stride, padding,
// kernel size, batch) is supported, so the plan can always fall back to it.
#include <climits>
#include <cstdint>
#include <string>

#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu {
namespace {

constexpr int kThreads = 256;

// Threads walk the flat NCHW output index (width fastest, so a warp reads neighbouring input
// pixels and writes one contiguous run); a grid-stride loop covers outputs of any count.
__global__ void __launch_bounds__(kThreads)
    conv_baseline(const ConvShape s, const float* __restrict__ input, const float* __restrict__ weights,
                  float* __restrict__ output) {
  const int64_t total = int64_t{s.batch} * s.outChannels * s.outHeight * s.outWidth;
  const int64_t inPlane = int64_t{s.inHeight} * s.inWidth;
  const int kernelArea = s.kernelHeight * s.kernelWidth;
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < total; i += int64_t{gridDim.x} * kThreads) {
    const int ow = static_cast<int>(i % s.outWidth);
    int64_t rest = i / s.outWidth;
    const int oh = static_cast<int>(rest % s.outHeight);
    rest /= s.outHeight;
    const int m = static_cast<int>(rest % s.outChannels);
    const int64_t n = rest / s.outChannels;

    const float* image = input + n * s.inChannels * inPlane;
    const float* filter = weights + int64_t{m} * s.inChannels * kernelArea;
    const int y0 = oh * s.strideHeight - s.padTop;
    const int x0 = ow * s.strideWidth - s.padLeft;
    float sum = 0.0f;
    for (int c = 0; c < s.inChannels; ++c) {
      const float* plane = image + c * inPlane;
      const float* w = filter + int64_t{c} * kernelArea;
      for (int kh = 0; kh < s.kernelHeight; ++kh) {
        const int y = y0 + kh;
        if (y < 0 || y >= s.inHeight) continue;  // zero padding
        const float* row = plane + int64_t{y} * s.inWidth;
        for (int kw = 0; kw < s.kernelWidth; ++kw) {
          const int x = x0 + kw;
          if (x < 0 || x >= s.inWidth) continue;
          sum += row[x] * w[kh * s.kernelWidth + kw];
        }
      }
    }
    output[i] = sum;
  }
}

std::vector<KernelLaunchGeometry> baselineGeometry(const ConvProblem& p) {
  KernelLaunchGeometry g;
  g.kernel = "conv_baseline";
  g.gridX = flatGrid((p.outputElements() + kThreads - 1) / kThreads);
  g.blockX = kThreads;
  g.order = BlockOrder::kFlatOutput;
  g.mapping =
      "thread t of block b computes output b*256+t of the flat N x M x H x W output, width fastest "
      "(grid-stride beyond the grid)";
  return {g};
}

void launchBaseline(const ConvLaunch& l) {
  requireValidLaunch(l, "conv_baseline");
  const ConvShape s = shapeOf(l.problem);
  const KernelLaunchGeometry g = baselineGeometry(l.problem).front();
  TracedScope scope(l.context, "conv_baseline");
  conv_baseline<<<g.gridX, g.blockX, 0, l.context.stream()>>>(s, l.input, l.weights, l.output);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

KernelHandle baselineHandle(const ConvProblem&, size_t) {
  return {reinterpret_cast<const void*>(&conv_baseline), 0};
}

}  // namespace

extern const GpuKernel kBaselineKernel{nullptr, baselineGeometry, runWithoutEpilogue<launchBaseline>, nullptr,
                                       baselineHandle};

}  // namespace convscope::gpu
