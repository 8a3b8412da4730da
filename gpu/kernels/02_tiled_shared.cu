// Course step 2, shared-memory tiling: the tiled convolution. A block computes a 16x16 patch of one output
// map and first copies the input patch it covers ((16-1)*stride + K pixels per side) into shared
// memory, so each input pixel is fetched from global memory once per block instead of up to K*K
// times per block by neighbouring threads, as in the baseline.
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

// Grid: a flat, grid-stride list of (image, tile row, tile column, output map) blocks, the map
// fastest so that blocks reading the same input tile run together and share it in L2.
template <int Tile>
__global__ void __launch_bounds__(Tile* Tile)
    conv_tiled_shared(const ConvShape s, const InputTile t, const float* __restrict__ input,
                      const float* __restrict__ weights, float* __restrict__ output) {
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
    const float* filter = weights + int64_t{m} * s.inChannels * kernelArea;

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
        const float* w = filter + int64_t{c0} * kernelArea;
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

std::vector<KernelLaunchGeometry> tiledSharedGeometry(const ConvProblem& p) {
  return {input_tile::inputTileGeometry(p, "conv_tiled_shared")};
}

void launchTiledShared(const ConvLaunch& l) {
  requireValidLaunch(l, "conv_tiled_shared");
  if (const std::string reason = input_tile::inputTileUnsupportedReason(l.problem); !reason.empty())
    throw Error("conv_tiled_shared: " + reason);
  const ConvShape s = shapeOf(l.problem);
  const InputTile t = inputTileOf(l.problem);
  const KernelLaunchGeometry g = tiledSharedGeometry(l.problem).front();
  TracedScope scope(l.context, "conv_tiled_shared");
  conv_tiled_shared<kTile><<<g.gridX, g.blockX * g.blockY, static_cast<size_t>(g.sharedBytes), l.context.stream()>>>(
      s, t, l.input, l.weights, l.output);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

KernelHandle tiledSharedHandle(const ConvProblem& p, size_t) {
  return {reinterpret_cast<const void*>(&conv_tiled_shared<kTile>), tiledSharedGeometry(p).front().sharedBytes};
}

}  // namespace

extern const GpuKernel kTiledSharedKernel{input_tile::inputTileUnsupportedReason, tiledSharedGeometry,
                                          runWithoutEpilogue<launchTiledShared>, nullptr, tiledSharedHandle};

}  // namespace convscope::gpu
