// Course step 6, atomics: the sum over input channels split between blocks. Each block adds up the
// contributions of a group of at most 4 input channels to 256 outputs of one map in registers and
// adds its partial sums to the output, zeroed beforehand, with atomicAdd. A layer with too few
// outputs to fill the GPU thus gets several times more independent blocks than the baseline's one
// thread per output; the price is the memset and one atomic add per output per channel group.
#include <climits>
#include <cstdint>
#include <string>

#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu {
namespace {

constexpr int kThreads = 256;         // consecutive outputs of one map per block
constexpr int kChannelsPerGroup = 4;  // input channels summed in registers before one atomic add

// Grid: a flat, grid-stride list of (image, spatial tile, channel group, output map) blocks, the
// map fastest so that blocks reading the same input pixels run together and share them in L2.
__global__ void __launch_bounds__(kThreads)
    conv_atomics(const ConvShape s, const int channelGroups, const int64_t spatialTiles,
                 const float* __restrict__ input, const float* __restrict__ weights, float* __restrict__ output) {
  const int64_t inPlane = int64_t{s.inHeight} * s.inWidth;
  const int64_t outPlane = int64_t{s.outHeight} * s.outWidth;
  const int kernelArea = s.kernelHeight * s.kernelWidth;
  const int64_t totalBlocks = int64_t{s.batch} * spatialTiles * channelGroups * s.outChannels;

  for (int64_t b = blockIdx.x; b < totalBlocks; b += gridDim.x) {
    const int m = static_cast<int>(b % s.outChannels);
    int64_t rest = b / s.outChannels;
    const int group = static_cast<int>(rest % channelGroups);
    rest /= channelGroups;
    const int64_t tile = rest % spatialTiles;
    const int64_t n = rest / spatialTiles;

    const int64_t pos = tile * kThreads + threadIdx.x;
    if (pos >= outPlane) continue;  // no barriers in this kernel, so threads may leave early
    const int oh = static_cast<int>(pos / s.outWidth);
    const int ow = static_cast<int>(pos - int64_t{oh} * s.outWidth);
    const int y0 = oh * s.strideHeight - s.padTop;
    const int x0 = ow * s.strideWidth - s.padLeft;
    const int firstChannel = group * kChannelsPerGroup;
    const int endChannel = min(firstChannel + kChannelsPerGroup, s.inChannels);

    float sum = 0.0f;
    for (int c = firstChannel; c < endChannel; ++c) {
      const float* plane = input + (n * s.inChannels + c) * inPlane;
      const float* w = weights + (int64_t{m} * s.inChannels + c) * kernelArea;
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
    atomicAdd(&output[(n * s.outChannels + m) * outPlane + pos], sum);
  }
}

int channelGroupsOf(const ConvProblem& p) {
  return (p.inChannels + kChannelsPerGroup - 1) / kChannelsPerGroup;
}
int64_t spatialTilesOf(const ConvProblem& p) {
  return (int64_t{p.outHeight()} * p.outWidth() + kThreads - 1) / kThreads;
}

std::vector<KernelLaunchGeometry> atomicsGeometry(const ConvProblem& p) {
  KernelLaunchGeometry g;
  g.kernel = "conv_atomics";
  g.gridX = flatGrid(int64_t{p.batch} * spatialTilesOf(p) * channelGroupsOf(p) * p.outChannels);
  g.blockX = kThreads;
  g.mapping = "one block per (image, output map, group of " + std::to_string(kChannelsPerGroup) +
              " input channels, run of 256 output pixels); thread t sums its pixel over the group's channels and "
              "atomically adds it to the output (zeroed first: zero_output)";
  return {g};
}

void launchAtomics(const ConvLaunch& l) {
  requireValidLaunch(l, "conv_atomics");
  const ConvProblem& p = l.problem;
  const ConvShape s = shapeOf(p);
  const int channelGroups = channelGroupsOf(p);
  const int64_t spatialTiles = spatialTilesOf(p);
  const KernelLaunchGeometry g = atomicsGeometry(p).front();
  {
    TracedScope scope(l.context, "zero_output");
    CONVSCOPE_CUDA_CHECK(
        cudaMemsetAsync(l.output, 0, static_cast<size_t>(p.outputElements()) * sizeof(float), l.context.stream()));
  }
  TracedScope scope(l.context, "conv_atomics");
  conv_atomics<<<g.gridX, g.blockX, 0, l.context.stream()>>>(s, channelGroups, spatialTiles, l.input, l.weights,
                                                             l.output);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace

extern const GpuKernel kAtomicsKernel{nullptr, atomicsGeometry, runWithoutEpilogue<launchAtomics>};

}  // namespace convscope::gpu
