// gpu-restrict-unroll: the per-layer kernels (same persistent blocks, shared-memory layout and
// register tiles) with the kernel size a template parameter (1, 3, 5 or 7), every loop over it
// fully unrolled, and __restrict__/const pointers. Knowing K, the compiler keeps a column of
// R + K - 1 input values in registers and slides the K kernel rows over it, so one shared-memory
// read feeds up to K * MT multiply-adds instead of MT, and all loop bookkeeping and address
// arithmetic disappear into immediate offsets; other kernel sizes take the per-layer kernels.
//
// PREDICTION (H100 SXM, batch 10,000), written before measuring:
//   PREDICTION_PLACEHOLDER
#include <string>

#include "direct_conv_tiles.cuh"
#include "kernels/conv_kernels.h"

namespace convscope::gpu {
namespace {

using direct_conv::DirectConvArgs;

// R output rows x MT output maps of one output column, K x K kernel, stride 1. Per channel and
// kernel column: R + K - 1 scalar loads of input and K * MT / 4 float4 loads of weights feed
// R * K * MT fused multiply-adds.
template <int K, int R, int MT>
struct CompileTimeSizeTile {
  static constexpr int kRows = R;
  static constexpr int kMaps = MT;
  static_assert(K >= 1 && K <= 7, "instantiated for K = 1, 3, 5, 7");

  static __device__ __forceinline__ void accumulate(const DirectConvArgs& a, const float* __restrict__ input,
                                                    const float* __restrict__ weights, float (&acc)[R][MT]) {
    const int pitch = a.rowPitch;
    const int channels = a.inChannels;
    const int planeStride = a.planeStride;
    const int channelWeights = a.mapGroups * K * K * MT;
    for (int c = 0; c < channels; ++c) {
#pragma unroll
      for (int kw = 0; kw < K; ++kw) {
        float column[R + K - 1];
#pragma unroll
        for (int i = 0; i < R + K - 1; ++i) column[i] = input[i * pitch + kw];
#pragma unroll
        for (int kh = 0; kh < K; ++kh) {
          const float4* __restrict__ tap = reinterpret_cast<const float4*>(weights + (kh * K + kw) * MT);
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
      }
      input += planeStride;
      weights += channelWeights;
    }
  }
};

template <int K, int R, int MT, int kMaxThreads, int kMinBlocks>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks) convRestrictUnrollTiles(const DirectConvArgs args) {
  direct_conv::runDirectConv<CompileTimeSizeTile<K, R, MT>>(args);
}

// The per-layer tiles (see conv_per_layer.cu), threads bounded by their registers.
constexpr int kFirstLayerThreads = 256;  // 7 rows x 12 maps, two blocks per multiprocessor
constexpr int kMultiChannelThreads = 576;
constexpr int kFewMapsThreads = 512;

template <int K, int R, int MT, int kMaxThreads, int kMinBlocks>
bool launchTile(const ConvLaunch& l, direct_conv::DirectConvDeviceState& device) {
  const std::string name = "convRestrictUnrollTiles<" + std::to_string(K) + "," + std::to_string(R) + "," +
                           std::to_string(MT) + ">";
  return direct_conv::launchDirectConv(l, device, convRestrictUnrollTiles<K, R, MT, kMaxThreads, kMinBlocks>,
                                       name.c_str(), R, MT, kMaxThreads);
}

// Same choice of tile as gpu-per-layer: few maps / one input channel / many channels.
template <int K>
bool launchCompileTimeSize(const ConvLaunch& l, direct_conv::DirectConvDeviceState& device) {
  const ConvProblem& p = l.problem;
  if (p.outChannels <= 4) return launchTile<K, 8, 4, kFewMapsThreads, 1>(l, device);
  if (p.inChannels == 1) return launchTile<K, 7, 12, kFirstLayerThreads, 2>(l, device);
  return launchTile<K, 5, 8, kMultiChannelThreads, 1>(l, device);
}

void launchRestrictUnroll(const ConvLaunch& l) {
  const ConvProblem& p = l.problem;
  if (p.batch <= 0 || p.outHeight() <= 0 || p.outWidth() <= 0) return;
  bool launched = false;
  if (!p.hasStride() && p.kernelHeight == p.kernelWidth) {
    direct_conv::DirectConvDeviceState& device = direct_conv::deviceState(l.context, "gpu-restrict-unroll");
    switch (p.kernelHeight) {
      case 1: launched = launchCompileTimeSize<1>(l, device); break;
      case 3: launched = launchCompileTimeSize<3>(l, device); break;
      case 5: launched = launchCompileTimeSize<5>(l, device); break;
      case 7: launched = launchCompileTimeSize<7>(l, device); break;
      default: break;
    }
  }
  // Other kernel sizes and strides: the run-time-size kernels, which fall back to the general
  // implicit GEMM where shared memory is too small.
  if (!launched) kConvPerLayer.launch(l);
}

}  // namespace

const ConvKernel kConvRestrictUnroll = {"gpu-restrict-unroll", nullptr, launchRestrictUnroll};

}  // namespace convscope::gpu
