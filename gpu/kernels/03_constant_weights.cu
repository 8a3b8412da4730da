// Course step 3, constant memory: the tiled convolution of 02_tiled_shared.cu with the filter bank in
// __constant__ memory. Every thread of a block reads the same weight at the same moment, and the
// constant cache serves such a uniform read to the whole warp in one access, where the tiled
// kernel spent a load instruction per weight on the L1 path it shares with the input tile.
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

// The filter bank of the layer being computed. 56 KB: the course's second layer (24x12x7x7 floats,
// 56,448 bytes) fits, and 8 KB of the 64 KB constant bank stay free for other users. The buffer is
// one per program: the launcher's copy and its kernel are queued in order on the one stream.
constexpr int kMaxConstantWeights = 14336;
__constant__ float constantWeights[kMaxConstantWeights];

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

std::string constantWeightsUnsupported(const ConvProblem& p) {
  if (p.weightElements() > kMaxConstantWeights)
    return "its " + std::to_string(p.weightElements() * 4) + " bytes of weights exceed the " +
           std::to_string(kMaxConstantWeights * 4) + "-byte constant-memory buffer";
  const InputTile t = inputTileOf(p);
  if (t.bytesPerChannel() <= kMaxSharedBytes) return {};
  return "its " + std::to_string(t.rows) + "x" + std::to_string(t.cols) +
         " input tile per channel needs more than the 48 KB of shared memory a block gets";
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
  const InputTile t = inputTileOf(p);
  KernelLaunchGeometry g;
  g.kernel = "conv_constant_weights";
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
      std::to_string(t.channelsPerStage) +
      " channels at a time; the weights are copied to constant memory first (copy_weights_to_constant)";
  return {g};
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
