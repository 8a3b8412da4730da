// Course step 5, kernel fusion: the GEMM of 04_unroll_gemm.cu with the unrolling fused into its loads
// (an implicit GEMM). Each tile of X is built in shared memory straight from the input image, so
// the unrolled matrix, K*K times the size of the input, is never written to or read back from
// global memory, and the whole batch goes through in one launch without a workspace.
#include <climits>
#include <cstdint>
#include <string>

#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu {
namespace {

// A block computes TileRows output maps x kTileCols columns. With at most 32 output maps, one
// thread holds a whole column strip (all TileRows rows x kColsPerThread columns): every weight it
// reads from shared memory is a broadcast (the block shares one row range) and every X value it
// reads feeds TileRows multiply-adds. Its columns are kThreads apart so that each warp's global
// loads, shared-memory accesses and output stores touch 32 consecutive columns.
constexpr int kThreads = 128;
constexpr int kColsPerThread = 4;
constexpr int kTileCols = kThreads * kColsPerThread;  // 512
constexpr int kTileK = 8;                             // depth of one shared-memory tile
constexpr int kMaxTileRows = 32;
static_assert(kThreads % 32 == 0, "whole warps");
static_assert((kTileK & (kTileK - 1)) == 0, "the weight-tile loader divides by kTileK");

// Output maps per block: the fewest row tiles of at most 32 maps, each rounded up to a multiple
// of 4 (float4 weight reads): 12 maps -> one tile of 12, 24 -> 24, 64 -> two of 32.
struct RowTiling {
  int tiles;
  int rowsPerTile;
};

RowTiling rowTilingOf(int outChannels) {
  const int tiles = (outChannels + kMaxTileRows - 1) / kMaxTileRows;
  const int rows = (outChannels + tiles - 1) / tiles;
  return {tiles, (rows + 3) / 4 * 4};
}

// Blocks per SM to leave registers for: as many as the accumulators allow without spilling (ptxas
// -v), so that the scheduler has other warps to run while one waits on its input loads.
constexpr int minBlocksPerSm(int tileRows) {
  return tileRows <= 12 ? 4 : tileRows <= 24 ? 3 : 2;
}

// output[image][m][pos] = sum_k weights[m][k] * X[k][column] over the whole batch, column =
// (image, pos), X[k][column] = input[image][c][oh*stride - pad + kh][ow*stride - pad + kw] with
// k = (c, kh, kw) read on the fly (zero in the padding); the result goes straight to its NCHW place.
template <int TileRows>
__global__ void __launch_bounds__(kThreads, minBlocksPerSm(TileRows))
    conv_fused_unroll_matmul(const ConvShape s, const int rowTiles, const float* __restrict__ input,
                             const float* __restrict__ weights, float* __restrict__ output) {
  static_assert(TileRows % 4 == 0 && TileRows >= 4 && TileRows <= kMaxTileRows, "rows come in float4 groups");
  __shared__ float xTile[kTileK][kTileCols];
  __shared__ __align__(16) float wTile[kTileK][TileRows];  // transposed: a k row holds the block's maps

  const int tid = threadIdx.x;
  const int depth = s.inChannels * s.kernelHeight * s.kernelWidth;
  const int64_t inPlane = int64_t{s.inHeight} * s.inWidth;
  const int64_t outPlane = int64_t{s.outHeight} * s.outWidth;
  const int64_t cols = s.batch * outPlane;
  const int64_t totalBlocks = (cols + kTileCols - 1) / kTileCols * rowTiles;

  for (int64_t b = blockIdx.x; b < totalBlocks; b += gridDim.x) {
    const int m0 = static_cast<int>(b % rowTiles) * TileRows;
    const int64_t j0 = b / rowTiles * kTileCols;

    // The thread loads the same columns in every k row: where each one's receptive field starts.
    // A column past the end gets an origin whose window lies wholly outside the image.
    const float* image[kColsPerThread];
    int y0[kColsPerThread];
    int x0[kColsPerThread];
#pragma unroll
    for (int j = 0; j < kColsPerThread; ++j) {
      const int64_t col = j0 + tid + j * kThreads;
      const bool inside = col < cols;
      const int64_t n = inside ? col / outPlane : 0;
      const int pos = inside ? static_cast<int>(col - n * outPlane) : 0;
      const int oh = pos / s.outWidth;
      const int ow = pos - oh * s.outWidth;
      image[j] = input + n * s.inChannels * inPlane;
      y0[j] = inside ? oh * s.strideHeight - s.padTop : s.inHeight;
      x0[j] = ow * s.strideWidth - s.padLeft;
    }

    float acc[TileRows][kColsPerThread];
#pragma unroll
    for (int r = 0; r < TileRows; ++r)
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) acc[r][j] = 0.0f;

    // (c, kh, kw) of row k, stepped along with k rather than divided out for every element.
    int c = 0, kh = 0, kw = 0;
    int64_t channelOffset = 0;
    for (int k0 = 0; k0 < depth; k0 += kTileK) {
      // The weight tile, zero-filled past the matrix's edges.
      for (int e = tid; e < kTileK * TileRows; e += kThreads) {
        const int kk = e % kTileK;
        const int m = m0 + e / kTileK;
        const int k = k0 + kk;
        wTile[kk][e / kTileK] = m < s.outChannels && k < depth ? weights[int64_t{m} * depth + k] : 0.0f;
      }
      // The X tile, unrolled from the input as it is loaded.
#pragma unroll
      for (int kk = 0; kk < kTileK; ++kk) {
        const bool rowInside = c < s.inChannels;  // false only in the last tile's padding rows
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) {
          const int y = y0[j] + kh;
          const int x = x0[j] + kw;
          const bool inside = rowInside && y >= 0 && y < s.inHeight && x >= 0 && x < s.inWidth;
          xTile[kk][tid + j * kThreads] = inside ? image[j][channelOffset + int64_t{y} * s.inWidth + x] : 0.0f;
        }
        if (++kw == s.kernelWidth) {
          kw = 0;
          if (++kh == s.kernelHeight) {
            kh = 0;
            ++c;
            channelOffset += inPlane;
          }
        }
      }
      __syncthreads();

#pragma unroll
      for (int kk = 0; kk < kTileK; ++kk) {
        float x[kColsPerThread];
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) x[j] = xTile[kk][tid + j * kThreads];
#pragma unroll
        for (int r = 0; r < TileRows; r += 4) {
          const float4 w = *reinterpret_cast<const float4*>(&wTile[kk][r]);
#pragma unroll
          for (int j = 0; j < kColsPerThread; ++j) {
            acc[r + 0][j] += w.x * x[j];
            acc[r + 1][j] += w.y * x[j];
            acc[r + 2][j] += w.z * x[j];
            acc[r + 3][j] += w.w * x[j];
          }
        }
      }
      __syncthreads();  // the next tiles overwrite these
    }

#pragma unroll
    for (int j = 0; j < kColsPerThread; ++j) {
      const int64_t col = j0 + tid + j * kThreads;
      if (col >= cols) continue;
      const int64_t n = col / outPlane;
      float* dst = output + n * s.outChannels * outPlane + (col - n * outPlane);
#pragma unroll
      for (int r = 0; r < TileRows; ++r)
        if (m0 + r < s.outChannels) dst[(m0 + r) * outPlane] = acc[r][j];
    }
  }
}

KernelLaunchGeometry matmulGeometry(const char* kernel, int64_t cols, int outChannels) {
  const RowTiling rows = rowTilingOf(outChannels);
  KernelLaunchGeometry g;
  g.kernel = kernel;
  g.gridX = flatGrid((cols + kTileCols - 1) / kTileCols * rows.tiles);
  g.blockX = kThreads;
  g.tileHeight = rows.rowsPerTile;  // output maps per block
  g.tileWidth = kTileCols;          // columns (image, output pixel) per block
  g.order = BlockOrder::kMatrixTiles;
  g.sharedBytes = int64_t{kTileK} * (kTileCols + rows.rowsPerTile) * static_cast<int64_t>(sizeof(float));
  g.mapping = "one block per (" + std::to_string(rows.rowsPerTile) + " output maps x " + std::to_string(kTileCols) +
              " columns) tile of the output matrix (columns: one per output pixel of each image; the tile of unrolled "
              "inputs is built in shared memory), the map tile fastest; thread t computes columns t, t+" +
              std::to_string(kThreads) + ", ... for every map of the tile, in registers";
  return g;
}

// Launches the instantiation for rows.rowsPerTile (4, 8, ..., 32).
template <int TileRows = 4>
void launchMatmul(const ConvLaunch& l, const ConvShape& s, const RowTiling& rows) {
  if constexpr (TileRows < kMaxTileRows) {
    if (rows.rowsPerTile > TileRows) return launchMatmul<TileRows + 4>(l, s, rows);
  }
  const int64_t cols = int64_t{s.batch} * s.outHeight * s.outWidth;
  const KernelLaunchGeometry g = matmulGeometry("conv_fused_unroll_matmul", cols, s.outChannels);
  conv_fused_unroll_matmul<TileRows>
      <<<g.gridX, g.blockX, 0, l.context.stream()>>>(s, rows.tiles, l.input, l.weights, l.output);
}

std::vector<KernelLaunchGeometry> fusedUnrollGemmGeometry(const ConvProblem& p) {
  return {matmulGeometry("conv_fused_unroll_matmul", int64_t{p.batch} * p.outHeight() * p.outWidth(), p.outChannels)};
}

void launchFusedUnrollGemm(const ConvLaunch& l) {
  requireValidLaunch(l, "conv_fused_unroll_matmul");
  const ConvShape s = shapeOf(l.problem);
  TracedScope scope(l.context, "conv_fused_unroll_matmul");
  launchMatmul(l, s, rowTilingOf(s.outChannels));
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

// The instantiation launchMatmul picks for `rowsPerTile` maps per block.
template <int TileRows = 4>
const void* matmulFunction(int rowsPerTile) {
  if constexpr (TileRows < kMaxTileRows) {
    if (rowsPerTile > TileRows) return matmulFunction<TileRows + 4>(rowsPerTile);
  }
  return reinterpret_cast<const void*>(&conv_fused_unroll_matmul<TileRows>);
}

KernelHandle fusedUnrollGemmHandle(const ConvProblem& p, size_t index) {
  (void)index;  // one launch
  return {matmulFunction(rowTilingOf(p.outChannels).rowsPerTile), 0};
}

}  // namespace

extern const GpuKernel kFusedUnrollGemmKernel{
    nullptr, fusedUnrollGemmGeometry, runWithoutEpilogue<launchFusedUnrollGemm>, nullptr, fusedUnrollGemmHandle};

}  // namespace convscope::gpu
