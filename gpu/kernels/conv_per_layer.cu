// gpu-per-layer: one kernel shape per kind of layer instead of one kernel for all. A persistent
// block holds every weight and whole images in shared memory, and each thread accumulates a
// register tile of several output rows x several output maps, so each input value read from
// shared memory feeds MT multiply-adds and each weight read (a float4 broadcast to the warp)
// feeds R. The tile is picked per layer: all 12 maps x 7 rows for a 1-channel first layer
// (little input, much output), 8 maps x 5 rows for multi-channel layers (much arithmetic per
// output), 4 maps x 8 rows for layers with few maps. Kernel sizes stay run-time loop bounds here.
#include "direct_conv_tiles.cuh"
#include "kernels/conv_kernels.h"

namespace convscope::gpu {
namespace {

using direct_conv::DirectConvArgs;

// R output rows x MT output maps with run-time kernel size and stride: every tap costs R loads
// of the input, MT/4 float4 loads of weights and the loop's own bookkeeping.
template <int R, int MT>
struct RuntimeSizeTile {
  static constexpr int kRows = R;
  static constexpr int kMaps = MT;

  static __device__ __forceinline__ void accumulate(const DirectConvArgs& a, const float* input, const float* weights,
                                                    float (&acc)[R][MT]) {
    const int taps = a.kernelHeight * a.kernelWidth;
    const int channelWeights = a.mapGroups * taps * MT;
    const int rowStep = a.strideHeight * a.rowPitch;  // between the input rows of two output rows
    for (int c = 0; c < a.inChannels; ++c) {
      for (int kh = 0; kh < a.kernelHeight; ++kh) {
        const float* inputRow = input + kh * a.rowPitch;
        const float* tapWeights = weights + kh * a.kernelWidth * MT;
        for (int kw = 0; kw < a.kernelWidth; ++kw) {
          float w[MT];
#pragma unroll
          for (int j = 0; j < MT; j += 4) {
            const float4 v = *reinterpret_cast<const float4*>(tapWeights + kw * MT + j);
            w[j] = v.x;
            w[j + 1] = v.y;
            w[j + 2] = v.z;
            w[j + 3] = v.w;
          }
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const float x = inputRow[r * rowStep + kw];
#pragma unroll
            for (int j = 0; j < MT; ++j) acc[r][j] = fmaf(x, w[j], acc[r][j]);
          }
        }
      }
      input += a.planeStride;
      weights += channelWeights;
    }
  }
};

template <int R, int MT, int kMaxThreads, int kMinBlocks>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks) convPerLayerTiles(DirectConvArgs args) {
  direct_conv::runDirectConv<RuntimeSizeTile<R, MT>>(args);
}

// The three tiles and the threads a block may have (registers bound them: ~R*MT accumulators).
constexpr int kFirstLayerThreads = 256;  // 7 rows x 12 maps, two blocks per multiprocessor
constexpr int kMultiChannelThreads = 576;
constexpr int kFewMapsThreads = 512;

void launchPerLayer(const ConvLaunch& l) {
  const ConvProblem& p = l.problem;
  if (p.batch <= 0 || p.outHeight() <= 0 || p.outWidth() <= 0) return;
  direct_conv::DirectConvDeviceState& device = direct_conv::deviceState(l.context, "gpu-per-layer");
  bool launched = false;
  if (p.outChannels <= 4)
    launched = direct_conv::launchDirectConv(l, device, convPerLayerTiles<8, 4, kFewMapsThreads, 1>,
                                             "convPerLayerTiles<8,4>", 8, 4, kFewMapsThreads);
  else if (p.inChannels == 1)
    launched = direct_conv::launchDirectConv(l, device, convPerLayerTiles<7, 12, kFirstLayerThreads, 2>,
                                             "convPerLayerTiles<7,12>", 7, 12, kFirstLayerThreads);
  else
    launched = direct_conv::launchDirectConv(l, device, convPerLayerTiles<5, 8, kMultiChannelThreads, 1>,
                                             "convPerLayerTiles<5,8>", 5, 8, kMultiChannelThreads);
  // Weights plus one image too large for shared memory: the general implicit GEMM.
  if (!launched) kConvFusedUnrollGemm.launch(l);
}

}  // namespace

const ConvKernel kConvPerLayer = {"gpu-per-layer", nullptr, launchPerLayer};

}  // namespace convscope::gpu
