// Beyond the course, step 10, a fused epilogue: the convolution, its bias, the activation and the
// pooling that follow it in one kernel. A thread computes one output of the pooling: the conv
// values of its window (each summed from global memory as in the baseline), plus the bias, through
// the activation, then their maximum or mean. The full-size conv output -- 85 MB for the course's
// first layer at batch 10,000, written by one kernel and read back by three more otherwise -- never
// reaches memory. The row lists the ops it applies, so the engine's plan hands it the chain
// Conv -> activation -> pooling as one stage; without an epilogue (every layer captured for the
// feature maps) it computes the plain convolution.
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "app/core/util/error.h"
#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"
#include "gpu/kernels/epilogue.cuh"

namespace convscope::gpu {
namespace {

constexpr int kThreads = 256;

// The epilogue as a kernel argument, with the geometry of any pooling. Without one, the kernel
// computes the maximum of a 1x1 window at stride 1: the conv value itself.
struct EpilogueArgs {
  FusedEpilogue ops;
  bool maxPool;  // max, or no pooling; else average
  bool countIncludePad;
  int outHeight, outWidth;  // of the pooling (the conv's when there is none)
  int kernelHeight, kernelWidth, strideHeight, strideWidth, padTop, padLeft, padBottom, padRight;
};

EpilogueArgs epilogueArgsOf(const ConvProblem& p, const ConvEpilogue& e) {
  EpilogueArgs a{};
  a.ops = fusedEpilogueOf(e);
  a.maxPool = a.ops.pooling != FusedPooling::kAverage;
  a.countIncludePad = e.hasPool && e.pool.countIncludePad;
  if (e.hasPool) {
    a.outHeight = e.pool.outHeight;
    a.outWidth = e.pool.outWidth;
    a.kernelHeight = e.pool.kernelHeight;
    a.kernelWidth = e.pool.kernelWidth;
    a.strideHeight = e.pool.strideHeight;
    a.strideWidth = e.pool.strideWidth;
    a.padTop = e.pool.padTop;
    a.padLeft = e.pool.padLeft;
    a.padBottom = e.pool.padBottom;
    a.padRight = e.pool.padRight;
  } else {
    a.outHeight = p.outHeight();
    a.outWidth = p.outWidth();
    a.kernelHeight = a.kernelWidth = a.strideHeight = a.strideWidth = 1;
  }
  return a;
}

// Thread i computes pooled output i of the flat N x M x PH x PW output, width fastest.
__global__ void __launch_bounds__(kThreads)
    conv_fused_epilogue(const ConvShape s, const EpilogueArgs e, const float* __restrict__ input,
                        const float* __restrict__ weights, float* __restrict__ output) {
  const int64_t total = int64_t{s.batch} * s.outChannels * e.outHeight * e.outWidth;
  const int64_t inPlane = int64_t{s.inHeight} * s.inWidth;
  const int kernelArea = s.kernelHeight * s.kernelWidth;
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < total; i += int64_t{gridDim.x} * kThreads) {
    const int px = static_cast<int>(i % e.outWidth);
    int64_t rest = i / e.outWidth;
    const int py = static_cast<int>(rest % e.outHeight);
    rest /= e.outHeight;
    const int m = static_cast<int>(rest % s.outChannels);
    const int64_t n = rest / s.outChannels;
    const float* image = input + n * s.inChannels * inPlane;
    const float* filter = weights + int64_t{m} * s.inChannels * kernelArea;
    const float bias = e.ops.bias ? e.ops.bias[m] : 0.0f;

    const int wy0 = py * e.strideHeight - e.padTop;
    const int wx0 = px * e.strideWidth - e.padLeft;
    float pooled = e.maxPool ? -INFINITY : 0.0f;  // as the CPU's pooling: a window of -inf gives -inf
    bool any = false;
    int inside = 0;
    for (int wy = 0; wy < e.kernelHeight; ++wy) {
      const int oh = wy0 + wy;
      if (oh < 0 || oh >= s.outHeight) continue;  // the pooling's padding
      for (int wx = 0; wx < e.kernelWidth; ++wx) {
        const int ow = wx0 + wx;
        if (ow < 0 || ow >= s.outWidth) continue;
        const int y0 = oh * s.strideHeight - s.padTop;
        const int x0 = ow * s.strideWidth - s.padLeft;
        float sum = 0.0f;
        for (int c = 0; c < s.inChannels; ++c) {
          const float* plane = image + c * inPlane;
          const float* w = filter + int64_t{c} * kernelArea;
          for (int kh = 0; kh < s.kernelHeight; ++kh) {
            const int y = y0 + kh;
            if (y < 0 || y >= s.inHeight) continue;  // the convolution's zero padding
            const float* row = plane + int64_t{y} * s.inWidth;
            for (int kw = 0; kw < s.kernelWidth; ++kw) {
              const int x = x0 + kw;
              if (x < 0 || x >= s.inWidth) continue;
              sum += row[x] * w[kh * s.kernelWidth + kw];
            }
          }
        }
        const float value = activate(e.ops.activation, sum + bias);
        pooled = e.maxPool ? fmaxf(pooled, value) : pooled + value;
        any = true;
        ++inside;
      }
    }
    if (e.maxPool) {
      output[i] = any ? pooled : -INFINITY;
      continue;
    }
    // The divisor of AveragePool: the window clipped to the padded input, or to the input itself.
    int count = inside;
    if (e.countIncludePad)
      count = (min(wy0 + e.kernelHeight, s.outHeight + e.padBottom) - wy0) *
              (min(wx0 + e.kernelWidth, s.outWidth + e.padRight) - wx0);
    output[i] = count > 0 ? pooled / static_cast<float>(count) : 0.0f;
  }
}

KernelLaunchGeometry geometryOf(const ConvProblem& p, const EpilogueArgs& e) {
  KernelLaunchGeometry g;
  g.kernel = "conv_fused_epilogue";
  g.gridX = flatGrid((int64_t{p.batch} * p.outChannels * e.outHeight * e.outWidth + kThreads - 1) / kThreads);
  g.blockX = kThreads;
  g.order = BlockOrder::kFlatOutput;  // over the pooled output when it pools
  g.mapping =
      "thread t of block b computes output b*256+t of the flat N x M x H x W output of the last op it "
      "applies (the pooling's when it has one), from the conv values of its window, with bias and "
      "activation, in registers (grid-stride beyond the grid)";
  return g;
}

// The launch for the plain convolution; with an epilogue that pools, the same mapping over the
// (smaller) pooled output.
std::vector<KernelLaunchGeometry> fusedEpilogueGeometry(const ConvProblem& p) {
  return {geometryOf(p, epilogueArgsOf(p, ConvEpilogue{}))};
}

void runFusedEpilogue(Device& device, const ConvProblem& p, const float* input, const float* weights, float* output,
                      const ConvEpilogue& epilogue) {
  GpuContext& context = contextOf(device);
  const ConvLaunch l{p, input, weights, output, context};
  requireValidLaunch(l, "conv_fused_epilogue");
  const EpilogueArgs e = epilogueArgsOf(p, epilogue);
  const KernelLaunchGeometry g = geometryOf(p, e);
  TracedScope scope(context, "conv_fused_epilogue");
  conv_fused_epilogue<<<g.gridX, g.blockX, 0, context.stream()>>>(shapeOf(p), e, input, weights, output);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

KernelHandle fusedEpilogueHandle(const ConvProblem&, size_t) {
  return {reinterpret_cast<const void*>(&conv_fused_epilogue), 0};
}

}  // namespace

extern const GpuKernel kFusedEpilogueKernel{nullptr, fusedEpilogueGeometry, runFusedEpilogue, nullptr,
                                            fusedEpilogueHandle};

}  // namespace convscope::gpu
