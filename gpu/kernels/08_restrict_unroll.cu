// Course step 8, __restrict__ and unrolling: the per-layer kernels (same persistent blocks, shared-memory layout and
// register tiles) with the kernel size a template parameter (1, 3, 5 or 7), the loops over it
// unrolled, and __restrict__/const pointers. Knowing K, the compiler keeps a column of R + K - 1
// input values in registers and slides the K kernel rows over it, so one shared-memory read
// feeds up to K * MT multiply-adds instead of MT, and the address arithmetic turns into immediate
// offsets: the inner loop is ~91% FFMA. Other kernel sizes and strides it declines: the plan gives
// such layers to the per-layer kernels (the previous course step), and says so.
//
// PREDICTION (H100 SXM: 132 SMs at 1.98 GHz, FFMA peak 67 TFLOP/s, ~3 TB/s; batch 10,000):
//   conv1 (1x48x48 -> 12x42x42; 20.7 GFLOP, 0.94 GB): floors 0.31 ms (FFMA) and 0.31 ms
//     (bytes), which overlap only in part. The 7-row x 4-map tile issues ~340 M warp FFMAs plus
//     ~20% loads, stores and per-tile bookkeeping (a tile is only 1,372 FFMAs); at the ~60-65%
//     issue rate this FFMA-dense code reaches (ncu: dispatch stalls and bursts of eligible
//     warps) that is ~0.65 ms, ~32 TFLOP/s, 48% of FFMA peak, with DRAM about half busy.
//   conv2 (12x21x21 -> 24x15x15; 63.5 GFLOP, 0.3 GB): floors 0.95 ms (FFMA) and 0.14 ms
//     (bytes): compute-bound. The 15-row x 4-map tile: per kernel column 420 FFMA, 28 shared
//     loads, a few address adds (~93% FFMA), 12 warps per SM balanced over the 4 schedulers, 94%
//     of the threads with a tile; at ~70% issue -> ~65% of peak: ~1.45 ms, ~44 TFLOP/s.
//   Sum ~2.1 ms. Measured on an H100 80GB HBM3 during development (cuda events, median of 15):
//   conv1 0.66 ms, conv2 1.45 ms; cuDNN 9.19 (FP32 FMA, fastest algorithm: implicit GEMM)
//   3.18 ms and 3.78 ms, so ~3.3x faster in sum.
#include <string>

#include "gpu/kernels/direct_conv_tiles.cuh"

namespace convscope::gpu {
namespace {

using direct_conv::DirectConvArgs;

// R output rows x MT output maps of one output column, K x K kernel, stride 1. Per channel and
// kernel column: R + K - 1 scalar loads of input and K * MT / 4 float4 loads of weights feed
// R * K * MT fused multiply-adds. The kernel rows (kh), rows and maps are always unrolled (the
// register window needs compile-time indices); the kernel columns (kw) kColumnUnroll at a time:
// a fully unrolled 7 x 7 x 5 x 12 channel body (~3,300 instructions) overflows the instruction
// cache and ran 35% slower than the rolled loop on an H100.
template <int K, int R, int MT, int kColumnUnroll>
struct CompileTimeSizeTile {
  static constexpr int kRows = R;
  static constexpr int kMaps = MT;
  static_assert(K >= 1 && K <= 7, "instantiated for K = 1, 3, 5, 7");

  static __device__ __forceinline__ void accumulate(const DirectConvArgs& a, const float* __restrict__ input,
                                                    const float* __restrict__ weights, float (&acc)[R][MT]) {
    const int rowPitch = a.rowPitch;
    const int channels = a.shape.inChannels;
    const int planeStride = a.planeStride;
    const int channelWeights = a.mapGroups * K * K * MT;
    for (int c = 0; c < channels; ++c) {
      const float* __restrict__ inputColumn = input;
      const float* __restrict__ columnWeights = weights;
#pragma unroll(kColumnUnroll)
      for (int kw = 0; kw < K; ++kw) {
        float column[R + K - 1];
#pragma unroll
        for (int i = 0; i < R + K - 1; ++i) column[i] = inputColumn[i * rowPitch];
#pragma unroll
        for (int kh = 0; kh < K; ++kh) {
          const float4* __restrict__ tap = reinterpret_cast<const float4*>(columnWeights + kh * K * MT);
          float w[MT];
#pragma unroll
          for (int j = 0; j < MT / 4; ++j) {
            const float4 v = tap[j];
            w[4 * j] = v.x;
            w[4 * j + 1] = v.y;
            w[4 * j + 2] = v.z;
            w[4 * j + 3] = v.w;
          }
#pragma unroll
          for (int r = 0; r < R; ++r)
#pragma unroll
            for (int j = 0; j < MT; ++j) acc[r][j] = fmaf(column[r + kh], w[j], acc[r][j]);
        }
        inputColumn += 1;
        columnWeights += MT;
      }
      input += planeStride;
      weights += channelWeights;
    }
  }
};

template <int K, int R, int MT, int kColumnUnroll, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads, 1) convRestrictUnrollTiles(const DirectConvArgs args) {
  direct_conv::runDirectConv<CompileTimeSizeTile<K, R, MT, kColumnUnroll>>(args);
}

// The per-layer tiles (see direct_conv::chooseTile), threads bounded by their registers.
constexpr int kSmallTileThreads = 768;
constexpr int kLargeTileThreads = 384;

template <int K, int R, int MT, int kColumnUnroll, int kMaxThreads>
void launchTile(const ConvLaunch& l, direct_conv::DirectConvDeviceState& device) {
  const direct_conv::TileKernel tile{
      "convRestrictUnrollTiles<" + std::to_string(K) + "," + std::to_string(R) + "," + std::to_string(MT) + ">", R, MT,
      kMaxThreads};
  direct_conv::launchDirectConv(l, device, convRestrictUnrollTiles<K, R, MT, kColumnUnroll, kMaxThreads>, tile);
}

// The small tile's body is small enough to unroll whole; the large ones take two kernel
// columns per trip (1.45 ms for the second layer, against 1.51 rolled and 2.06 fully unrolled).
template <int K>
void launchCompileTimeSize(const ConvLaunch& l, direct_conv::DirectConvDeviceState& device) {
  switch (direct_conv::chooseTile(l.problem)) {
    case direct_conv::TileShape::kSmall:
      return launchTile<K, 7, 4, K, kSmallTileThreads>(l, device);
    case direct_conv::TileShape::kTall:
      return launchTile<K, 15, 4, 2, kLargeTileThreads>(l, device);
    case direct_conv::TileShape::kWide:
      return launchTile<K, 5, 12, 2, kLargeTileThreads>(l, device);
  }
}

bool compiledFor(const ConvProblem& p) {
  const int k = p.kernelHeight;
  return !p.hasStride() && p.kernelWidth == k && (k == 1 || k == 3 || k == 5 || k == 7);
}

direct_conv::TileKernel tileFor(const ConvProblem& p) {
  const std::string k = std::to_string(p.kernelHeight);
  switch (direct_conv::chooseTile(p)) {
    case direct_conv::TileShape::kSmall:
      return {"convRestrictUnrollTiles<" + k + ",7,4>", 7, 4, kSmallTileThreads};
    case direct_conv::TileShape::kTall:
      return {"convRestrictUnrollTiles<" + k + ",15,4>", 15, 4, kLargeTileThreads};
    case direct_conv::TileShape::kWide:
      break;
  }
  return {"convRestrictUnrollTiles<" + k + ",5,12>", 5, 12, kLargeTileThreads};
}

// Kernel sizes and strides it was not compiled for go, through the plan, to an earlier step.
std::string restrictUnrollUnsupported(const ConvProblem& p) {
  if (!compiledFor(p))
    return "compiled for square 1x1, 3x3, 5x5 and 7x7 kernels at stride 1; this layer is " +
           std::to_string(p.kernelHeight) + "x" + std::to_string(p.kernelWidth) + " at stride " +
           std::to_string(p.strideHeight) + "x" + std::to_string(p.strideWidth);
  return direct_conv::tileUnsupportedReason(p, tileFor(p));
}

std::vector<KernelLaunchGeometry> restrictUnrollGeometry(const ConvProblem& p) {
  return {direct_conv::tileGeometry(p, tileFor(p))};
}

void launchRestrictUnroll(const ConvLaunch& l) {
  const ConvProblem& p = l.problem;
  if (p.batch <= 0 || p.outHeight() <= 0 || p.outWidth() <= 0) return;
  if (!compiledFor(p)) throw Error("convRestrictUnrollTiles: not compiled for " + p.describe());
  direct_conv::DirectConvDeviceState& device = direct_conv::deviceState(l.context, "convRestrictUnrollTiles");
  switch (p.kernelHeight) {
    case 1:
      return launchCompileTimeSize<1>(l, device);
    case 3:
      return launchCompileTimeSize<3>(l, device);
    case 5:
      return launchCompileTimeSize<5>(l, device);
    default:
      return launchCompileTimeSize<7>(l, device);
  }
}

}  // namespace

extern const GpuKernel kRestrictUnrollKernel{restrictUnrollUnsupported, restrictUnrollGeometry,
                                             runWithoutEpilogue<launchRestrictUnroll>};

}  // namespace convscope::gpu
