// Course step 7, per-layer kernels: one kernel shape per kind of layer instead of one for all. A persistent
// block holds every weight and whole images in shared memory, and each thread accumulates a
// register tile of several output rows x several output maps, so each input value read from
// shared memory feeds MT multiply-adds and each weight read (a float4 broadcast to the warp)
// feeds R. The tile is picked per layer (direct_conv::chooseTile): a small one (7 rows x 4 maps,
// 768 threads) for the 1-channel first layer, whose time goes into writing its large output, and
// a large one (15 rows x 4 maps, or 5 rows x 12 maps, whichever wastes less on the shape) for
// multi-channel layers, whose time goes into arithmetic. Kernel sizes and strides stay run-time
// loop bounds here.
#include "gpu/kernels/direct_conv_tiles.cuh"

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
    const int taps = a.shape.kernelHeight * a.shape.kernelWidth;
    const int channelWeights = a.mapGroups * taps * MT;
    const int rowsBetweenOutputs = a.shape.strideHeight * a.rowPitch;
    for (int c = 0; c < a.shape.inChannels; ++c) {
      for (int kh = 0; kh < a.shape.kernelHeight; ++kh) {
        const float* tapWeights = weights + kh * a.shape.kernelWidth * MT;
        for (int kw = 0; kw < a.shape.kernelWidth; ++kw) {
          float w[MT];
#pragma unroll
          for (int j = 0; j < MT; j += 4) {
            const float4 v = *reinterpret_cast<const float4*>(tapWeights + kw * MT + j);
            w[j] = v.x;
            w[j + 1] = v.y;
            w[j + 2] = v.z;
            w[j + 3] = v.w;
          }
          const float* tapInput = input + kh * a.rowPitch + kw;
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const float x = tapInput[r * rowsBetweenOutputs];
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

template <int R, int MT, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads, 1) convPerLayerTiles(const DirectConvArgs args) {
  direct_conv::runDirectConv<RuntimeSizeTile<R, MT>>(args);
}

// Threads a block may have: registers bound them (~R*MT accumulators a thread).
constexpr int kSmallTileThreads = 768;
constexpr int kLargeTileThreads = 384;

// The tile for the layer's shape (direct_conv::chooseTile) and its kernel.
direct_conv::TileKernel tileFor(const ConvProblem& p) {
  switch (direct_conv::chooseTile(p)) {
    case direct_conv::TileShape::kSmall:
      return {"convPerLayerTiles<7,4>", 7, 4, kSmallTileThreads};
    case direct_conv::TileShape::kTall:
      return {"convPerLayerTiles<15,4>", 15, 4, kLargeTileThreads};
    case direct_conv::TileShape::kWide:
      break;
  }
  return {"convPerLayerTiles<5,12>", 5, 12, kLargeTileThreads};
}

std::string perLayerUnsupported(const ConvProblem& p) {
  return direct_conv::tileUnsupportedReason(p, tileFor(p));
}

std::vector<KernelLaunchGeometry> perLayerGeometry(const ConvProblem& p) {
  return {direct_conv::tileGeometry(p, tileFor(p))};
}

void launchPerLayer(const ConvLaunch& l) {
  const ConvProblem& p = l.problem;
  if (p.batch <= 0 || p.outHeight() <= 0 || p.outWidth() <= 0) return;
  direct_conv::DirectConvDeviceState& device = direct_conv::deviceState(l.context, "convPerLayerTiles");
  const direct_conv::TileKernel tile = tileFor(p);
  switch (direct_conv::chooseTile(p)) {
    case direct_conv::TileShape::kSmall:
      return direct_conv::launchDirectConv(l, device, convPerLayerTiles<7, 4, kSmallTileThreads>, tile);
    case direct_conv::TileShape::kTall:
      return direct_conv::launchDirectConv(l, device, convPerLayerTiles<15, 4, kLargeTileThreads>, tile);
    case direct_conv::TileShape::kWide:
      return direct_conv::launchDirectConv(l, device, convPerLayerTiles<5, 12, kLargeTileThreads>, tile);
  }
}

}  // namespace

extern const GpuKernel kPerLayerKernel{perLayerUnsupported, perLayerGeometry, runWithoutEpilogue<launchPerLayer>};

}  // namespace convscope::gpu
