// Course step 3, constant memory: the tiled convolution of 02_tiled_shared.cu with the filter bank in
// __constant__ memory. Every thread of a block reads the same weight at the same moment, and the
// constant cache serves such a uniform read to the whole warp in one access, where the tiled
// kernel spent a load instruction per weight on the L1 path it shares with the input tile.
#include <cstdint>
#include <string>

#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"
#include "gpu/kernels/input_tile.cuh"

namespace convscope::gpu {
namespace {

using input_tile::InputTile;
using input_tile::inputTileOf;
using input_tile::kTile;

// The filter bank of the layer being computed. 56 KB: the course's second layer (24x12x7x7 floats,
// 56,448 bytes) fits, and 8 KB of the 64 KB constant bank stay free for other users. The buffer is
// one per program: the launcher's copy and its kernel are queued in order on the one stream.
constexpr int kMaxConstantWeights = 14336;
__constant__ float constantWeights[kMaxConstantWeights];

std::string constantWeightsUnsupported(const ConvProblem& p) {
  if (p.weightElements() > kMaxConstantWeights)
    return "its " + std::to_string(p.weightElements() * static_cast<int64_t>(sizeof(float))) +
           " bytes of weights exceed the " + std::to_string(sizeof(constantWeights)) + "-byte constant-memory buffer";
  return input_tile::inputTileUnsupportedReason(p);
}

// Grid: a flat, grid-stride list of (image, tile row, tile column, output map) blocks, the map
// fastest so that blocks reading the same input tile run together and share it in L2.
template <int Tile>
__global__ void __launch_bounds__(Tile* Tile)
    conv_constant_weights(const ConvShape s, const InputTile t, const float* __restrict__ input,
                          float* __restrict__ output) {
  constexpr int kThreads = Tile * Tile;
  constexpr int kWarps = kThreads / 32;
  extern __shared__ float tile[];  // channelsPerStage x rows x pitch

  // Thread (tx, ty) of the patch. With Tile = 16 a warp takes rows ty and ty + 8 rather than two
  // adjacent rows; together with the pitch above this keeps its shared-memory reads conflict-free.
  const int lane = threadIdx.x % 32;
  const int tx = lane % Tile;
  const int ty = threadIdx.x / 32 + kWarps * (lane / Tile);

  const int64_t inPlane = int64_t{s.inHeight} * s.inWidth;
  const int kernelArea = s.kernelHeight * s.kernelWidth;
  const int tileFloats = t.rows * t.pitch;
  const int64_t totalBlocks = int64_t{s.batch} * t.tilesY * t.tilesX * s.outChannels;

  for (int64_t b = blockIdx.x; b < totalBlocks; b += gridDim.x) {
    const int m = static_cast<int>(b % s.outChannels);
    int64_t rest = b / s.outChannels;
    const int tileX = static_cast<int>(rest % t.tilesX);
    rest /= t.tilesX;
    const int tileY = static_cast<int>(rest % t.tilesY);
    const int64_t n = rest / t.tilesY;

    const int oh = tileY * Tile + ty;
    const int ow = tileX * Tile + tx;
    const bool active = oh < s.outHeight && ow < s.outWidth;
    const int y0 = tileY * Tile * s.strideHeight - s.padTop;  // input origin of the tile
    const int x0 = tileX * Tile * s.strideWidth - s.padLeft;
    const float* image = input + n * s.inChannels * inPlane;
    const float* filter = constantWeights + m * s.inChannels * kernelArea;

    float sum = 0.0f;
    for (int c0 = 0; c0 < s.inChannels; c0 += t.channelsPerStage) {
      const int stageChannels = min(t.channelsPerStage, s.inChannels - c0);
      // Load: zeros where the tile hangs over the padding or the image edge.
      for (int cc = 0; cc < stageChannels; ++cc) {
        const float* plane = image + (c0 + cc) * inPlane;
        float* dst = tile + cc * tileFloats;
        for (int row = ty; row < t.rows; row += Tile) {
          const int y = y0 + row;
          const bool rowInside = y >= 0 && y < s.inHeight;
          for (int col = tx; col < t.cols; col += Tile) {
            const int x = x0 + col;
            dst[row * t.pitch + col] = rowInside && x >= 0 && x < s.inWidth ? plane[int64_t{y} * s.inWidth + x] : 0.0f;
          }
        }
      }
      __syncthreads();
      if (active) {
        // Pointers walk the rows (rather than index arithmetic per multiply-add); the stage's
        // filters lie one after the other in the weight tensor.
        const float* patch = tile + ty * s.strideHeight * t.pitch + tx * s.strideWidth;
        const float* w = filter + c0 * kernelArea;
        for (int cc = 0; cc < stageChannels; ++cc, patch += tileFloats) {
          const float* row = patch;
          for (int kh = 0; kh < s.kernelHeight; ++kh, row += t.pitch, w += s.kernelWidth)
            for (int kw = 0; kw < s.kernelWidth; ++kw) sum += row[kw] * w[kw];
        }
      }
      __syncthreads();  // the next stage overwrites the tile
    }
    if (active) output[((n * s.outChannels + m) * s.outHeight + oh) * int64_t{s.outWidth} + ow] = sum;
  }
}

std::vector<KernelLaunchGeometry> constantWeightsGeometry(const ConvProblem& p) {
  return {input_tile::inputTileGeometry(
      p, "conv_constant_weights", "; the weights are copied to constant memory first (copy_weights_to_constant)")};
}

void launchConstantWeights(const ConvLaunch& l) {
  requireValidLaunch(l, "conv_constant_weights");
  if (const std::string reason = constantWeightsUnsupported(l.problem); !reason.empty())
    throw Error("conv_constant_weights: " + reason);
  const ConvShape s = shapeOf(l.problem);
  const InputTile t = inputTileOf(l.problem);
  const KernelLaunchGeometry g = constantWeightsGeometry(l.problem).front();
  {
    TracedScope scope(l.context, "copy_weights_to_constant");
    CONVSCOPE_CUDA_CHECK(cudaMemcpyToSymbolAsync(constantWeights, l.weights, l.problem.weightElements() * sizeof(float),
                                                 0, cudaMemcpyDeviceToDevice, l.context.stream()));
  }
  TracedScope scope(l.context, "conv_constant_weights");
  conv_constant_weights<kTile>
      <<<g.gridX, g.blockX * g.blockY, static_cast<size_t>(g.sharedBytes), l.context.stream()>>>(s, t, l.input,
                                                                                                 l.output);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

KernelHandle constantWeightsHandle(const ConvProblem& p, size_t) {
  return {reinterpret_cast<const void*>(&conv_constant_weights<kTile>), constantWeightsGeometry(p).front().sharedBytes};
}

}  // namespace

extern const GpuKernel kConstantWeightsKernel{constantWeightsUnsupported, constantWeightsGeometry,
                                              runWithoutEpilogue<launchConstantWeights>, nullptr,
                                              constantWeightsHandle};

}  // namespace convscope::gpu
