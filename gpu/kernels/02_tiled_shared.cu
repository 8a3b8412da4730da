// Course step 2, shared-memory tiling: the tiled convolution. A block computes a 16x16 patch of one output
// map and first copies the input patch it covers ((16-1)*stride + K pixels per side) into shared
// memory, so each input pixel is fetched from global memory once per block instead of up to K*K
// times per block by neighbouring threads, as in the baseline.
#include <climits>
#include <cstdint>
#include <string>

#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu {
namespace {

constexpr int kTile = 16;                   // output patch per block: kTile x kTile threads
constexpr int kStageBytes = 24 * 1024;      // input channels staged per barrier pair, at most this
constexpr int kMaxSharedBytes = 48 * 1024;  // what any block gets without opting in
static_assert(kTile * kTile % 32 == 0 && kTile <= 32, "a block of whole warps, at most 1024 threads");
static_assert(kStageBytes <= kMaxSharedBytes, "the staging budget must fit the shared-memory limit");

// The shared-memory input tile of one channel: rows x pitch floats. A warp of the 16x16 block
// holds output rows ty and ty+8 (see the kernel), whose input rows lie 8*strideHeight rows apart;
// a row pitch with strideHeight*pitch = 2 (mod 4) puts them 16 banks apart, so the warp's reads
// are free of bank conflicts for any odd strideWidth. Even horizontal strides conflict anyway.
struct InputTile {
  int rows, cols, pitch;
  int channelsPerStage;
  int tilesX, tilesY;
  int64_t bytesPerChannel() const { return int64_t{rows} * pitch * 4; }
};

InputTile inputTileOf(const ConvProblem& p) {
  InputTile t{};
  const int64_t rows = int64_t{kTile - 1} * p.strideHeight + p.kernelHeight;
  const int64_t cols = int64_t{kTile - 1} * p.strideWidth + p.kernelWidth;
  t.rows = static_cast<int>(rows < INT_MAX / 2 ? rows : INT_MAX / 2);
  t.cols = static_cast<int>(cols < INT_MAX / 2 ? cols : INT_MAX / 2);
  t.pitch = t.cols;
  if (kTile == 16 && p.strideWidth % 2 == 1)
    for (int pitch = t.cols; pitch < t.cols + 4; ++pitch)
      if (int64_t{p.strideHeight % 4} * (pitch % 4) % 4 == 2) {
        t.pitch = pitch;
        break;
      }
  const int64_t perChannel = t.bytesPerChannel();
  const int64_t fit = perChannel > 0 ? kStageBytes / perChannel : 0;
  t.channelsPerStage = static_cast<int>(fit < 1 ? 1 : (fit > p.inChannels ? p.inChannels : fit));
  t.tilesX = (p.outWidth() + kTile - 1) / kTile;
  t.tilesY = (p.outHeight() + kTile - 1) / kTile;
  return t;
}

std::string tiledSharedUnsupported(const ConvProblem& p) {
  const InputTile t = inputTileOf(p);
  if (t.bytesPerChannel() <= kMaxSharedBytes) return {};
  return "its " + std::to_string(t.rows) + "x" + std::to_string(t.cols) +
         " input tile per channel needs more than the 48 KB of shared memory a block gets";
}

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
  const InputTile t = inputTileOf(p);
  KernelLaunchGeometry g;
  g.kernel = "conv_tiled_shared";
  g.gridX = flatGrid(int64_t{p.batch} * t.tilesY * t.tilesX * p.outChannels);
  g.blockX = kTile;
  g.blockY = kTile;
  g.tileHeight = kTile;
  g.tileWidth = kTile;
  g.order = BlockOrder::kMapTiles;
  g.sharedBytes = int64_t{t.channelsPerStage} * t.bytesPerChannel();
  g.mapping =
      "one block per (image, 16x16 output tile, output map), the map fastest; thread (x, y) computes "
      "the tile's output (x, y); the block stages the tile's input with its halo (" +
      std::to_string(t.rows) + "x" + std::to_string(t.cols) +
      " per channel) "
      "for up to " +
      std::to_string(t.channelsPerStage) + " channels at a time";
  return {g};
}

void launchTiledShared(const ConvLaunch& l) {
  requireValidLaunch(l, "conv_tiled_shared");
  if (const std::string reason = tiledSharedUnsupported(l.problem); !reason.empty())
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

extern const GpuKernel kTiledSharedKernel{tiledSharedUnsupported, tiledSharedGeometry,
                                          runWithoutEpilogue<launchTiledShared>, nullptr, tiledSharedHandle};

}  // namespace convscope::gpu
