// Course step 4, input unrolling: the convolution as one matrix product. A first kernel unrolls (im2col) every
// receptive field into a column of X_unroll [C*K*K] x [images*OH*OW]; a shared-memory tiled GEMM
// then multiplies the filter matrix W [M] x [C*K*K] by it, each thread keeping a 32x4 or smaller
// block of results in registers, so every value read from shared memory feeds many multiply-adds
// instead of one as in the direct kernels; the price is writing and re-reading X_unroll.
#include <climits>
#include <cstdint>
#include <string>

#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu {
namespace {

constexpr int64_t kWorkspaceBudget = int64_t{512} << 20;  // bytes of X_unroll per chunk of images

// ---- Unroll --------------------------------------------------------------------------------------

constexpr int kUnrollThreads = 256;

// Thread (c, j) writes the K*K rows of channel c in column j = (image, oh, ow) of X_unroll, so a
// warp writes 32 consecutive columns of each row (coalesced) and reads neighbouring input pixels.
__global__ void __launch_bounds__(kUnrollThreads)
    conv_unroll_input(const ConvShape s, const int64_t firstImage, const int64_t cols, const float* __restrict__ input,
                      float* __restrict__ unrolled) {
  const int64_t inPlane = int64_t{s.inHeight} * s.inWidth;
  const int64_t outPlane = int64_t{s.outHeight} * s.outWidth;
  const int kernelArea = s.kernelHeight * s.kernelWidth;
  for (int c = blockIdx.y; c < s.inChannels; c += gridDim.y) {
    for (int64_t j = int64_t{blockIdx.x} * kUnrollThreads + threadIdx.x; j < cols;
         j += int64_t{gridDim.x} * kUnrollThreads) {
      const int64_t image = j / outPlane;
      const int pos = static_cast<int>(j - image * outPlane);
      const int oh = pos / s.outWidth;
      const int ow = pos - oh * s.outWidth;
      const float* plane = input + ((firstImage + image) * s.inChannels + c) * inPlane;
      float* dst = unrolled + int64_t{c} * kernelArea * cols + j;
      for (int kh = 0; kh < s.kernelHeight; ++kh) {
        const int y = oh * s.strideHeight - s.padTop + kh;
        const bool rowInside = y >= 0 && y < s.inHeight;
        for (int kw = 0; kw < s.kernelWidth; ++kw) {
          const int x = ow * s.strideWidth - s.padLeft + kw;
          *dst = rowInside && x >= 0 && x < s.inWidth ? plane[int64_t{y} * s.inWidth + x] : 0.0f;
          dst += cols;
        }
      }
    }
  }
}

// ---- Matrix product ------------------------------------------------------------------------------

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

// output[image][m][pos] = sum_k weights[m][k] * unrolled[k][column], column = (image, pos) of the
// chunk; the result goes straight to its NCHW place.
template <int TileRows>
__global__ void __launch_bounds__(kThreads)
    conv_unroll_matmul(const ConvShape s, const int64_t firstImage, const int64_t cols, const int rowTiles,
                       const float* __restrict__ weights, const float* __restrict__ unrolled,
                       float* __restrict__ output) {
  static_assert(TileRows % 4 == 0 && TileRows >= 4 && TileRows <= kMaxTileRows, "rows come in float4 groups");
  __shared__ float xTile[kTileK][kTileCols];
  __shared__ __align__(16) float wTile[kTileK][TileRows];  // transposed: a k row holds the block's maps

  const int tid = threadIdx.x;
  const int depth = s.inChannels * s.kernelHeight * s.kernelWidth;
  const int64_t outPlane = int64_t{s.outHeight} * s.outWidth;
  const int64_t totalBlocks = (cols + kTileCols - 1) / kTileCols * rowTiles;

  for (int64_t b = blockIdx.x; b < totalBlocks; b += gridDim.x) {
    const int m0 = static_cast<int>(b % rowTiles) * TileRows;
    const int64_t j0 = b / rowTiles * kTileCols;

    float acc[TileRows][kColsPerThread];
#pragma unroll
    for (int r = 0; r < TileRows; ++r)
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) acc[r][j] = 0.0f;

    for (int k0 = 0; k0 < depth; k0 += kTileK) {
      // Both tiles, zero-filled past the matrices' edges.
      for (int e = tid; e < kTileK * TileRows; e += kThreads) {
        const int kk = e % kTileK;
        const int m = m0 + e / kTileK;
        const int k = k0 + kk;
        wTile[kk][e / kTileK] = m < s.outChannels && k < depth ? weights[int64_t{m} * depth + k] : 0.0f;
      }
#pragma unroll
      for (int kk = 0; kk < kTileK; ++kk) {
        const int k = k0 + kk;
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) {
          const int col = tid + j * kThreads;
          xTile[kk][col] = k < depth && j0 + col < cols ? unrolled[int64_t{k} * cols + j0 + col] : 0.0f;
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
      const int64_t image = firstImage + col / outPlane;
      float* dst = output + image * s.outChannels * outPlane + col % outPlane;
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
              " columns) tile of the output matrix (columns: the unrolled X matrix), the map tile fastest; thread t "
              "computes columns t, t+" +
              std::to_string(kThreads) + ", ... for every map of the tile, in registers";
  return g;
}

// Launches the instantiation for rows.rowsPerTile (4, 8, ..., 32).
template <int TileRows = 4>
void launchMatmul(const ConvLaunch& l, const ConvShape& s, int64_t firstImage, int64_t cols, const RowTiling& rows,
                  const float* unrolled) {
  if constexpr (TileRows < kMaxTileRows) {
    if (rows.rowsPerTile > TileRows) return launchMatmul<TileRows + 4>(l, s, firstImage, cols, rows, unrolled);
  }
  const KernelLaunchGeometry g = matmulGeometry("conv_unroll_matmul", cols, s.outChannels);
  conv_unroll_matmul<TileRows>
      <<<g.gridX, g.blockX, 0, l.context.stream()>>>(s, firstImage, cols, rows.tiles, l.weights, unrolled, l.output);
}

// ---- Launcher ------------------------------------------------------------------------------------

// Bytes of one image's X_unroll: C*K*K rows x H_out*W_out columns of floats.
int64_t unrolledBytesPerImage(const ConvProblem& p) {
  return int64_t{p.inChannels} * p.kernelHeight * p.kernelWidth * p.outHeight() * p.outWidth() *
         static_cast<int64_t>(sizeof(float));
}

// Images unrolled at once: X_unroll for them stays within kWorkspaceBudget.
int64_t imagesPerChunk(const ConvProblem& p) {
  const int64_t bytesPerImage = unrolledBytesPerImage(p);
  const int64_t chunk = kWorkspaceBudget / bytesPerImage;
  return chunk < 1 ? 1 : (chunk > p.batch ? p.batch : chunk);
}

KernelLaunchGeometry unrollGeometry(const ConvProblem& p, int64_t cols) {
  KernelLaunchGeometry g;
  g.kernel = "conv_unroll_input";
  g.gridX = flatGrid((cols + kUnrollThreads - 1) / kUnrollThreads);
  g.gridY = p.inChannels < 65535 ? p.inChannels : 65535;
  g.blockX = kUnrollThreads;
  g.mapping =
      "thread t of block (x, c) writes the K*K rows of input channel c in column x*256+t of X_unroll "
      "(one column per output pixel of each image)";
  return g;
}

// One image's unrolled matrix must fit the budget: chunks never go below one image.
std::string unrollGemmUnsupported(const ConvProblem& p) {
  const int64_t bytesPerImage = unrolledBytesPerImage(p);
  if (bytesPerImage <= kWorkspaceBudget) return {};
  return "one image's unrolled matrix needs " + std::to_string(bytesPerImage >> 20) + " MB, more than the " +
         std::to_string(kWorkspaceBudget >> 20) + " MB workspace it unrolls into";
}

// The launches of the first chunk of images (the others repeat them).
std::vector<KernelLaunchGeometry> unrollGemmGeometry(const ConvProblem& p) {
  const int64_t chunk = imagesPerChunk(p);
  const int64_t cols = chunk * p.outHeight() * p.outWidth();
  KernelLaunchGeometry unroll = unrollGeometry(p, cols);
  KernelLaunchGeometry matmul = matmulGeometry("conv_unroll_matmul", cols, p.outChannels);
  const int64_t chunks = (p.batch + chunk - 1) / chunk;
  if (chunks > 1) {
    const std::string note = " (one of " + std::to_string(chunks) + " chunks of " + std::to_string(chunk) + " images)";
    unroll.mapping += note;
    matmul.mapping += note;
  }
  return {unroll, matmul};
}

void launchUnrollGemm(const ConvLaunch& l) {
  requireValidLaunch(l, "conv_unroll_gemm");
  const ConvProblem& p = l.problem;
  const ConvShape s = shapeOf(p);
  const int64_t outPlane = int64_t{s.outHeight} * s.outWidth;
  const int64_t chunk = imagesPerChunk(p);
  const int64_t bytesPerImage = unrolledBytesPerImage(p);
  float* unrolled = static_cast<float*>(l.context.workspace(static_cast<size_t>(chunk * bytesPerImage)));
  const RowTiling rows = rowTilingOf(p.outChannels);

  for (int64_t first = 0; first < p.batch; first += chunk) {
    const int64_t images = p.batch - first < chunk ? p.batch - first : chunk;
    const int64_t cols = images * outPlane;
    {
      TracedScope scope(l.context, "conv_unroll_input");
      const KernelLaunchGeometry g = unrollGeometry(p, cols);
      conv_unroll_input<<<dim3(g.gridX, g.gridY), g.blockX, 0, l.context.stream()>>>(s, first, cols, l.input, unrolled);
      CONVSCOPE_CUDA_CHECK_LAUNCH();
    }
    {
      TracedScope scope(l.context, "conv_unroll_matmul");
      launchMatmul(l, s, first, cols, rows, unrolled);
      CONVSCOPE_CUDA_CHECK_LAUNCH();
    }
  }
}

// The instantiation launchMatmul picks for `rowsPerTile` maps per block.
template <int TileRows = 4>
const void* matmulFunction(int rowsPerTile) {
  if constexpr (TileRows < kMaxTileRows) {
    if (rowsPerTile > TileRows) return matmulFunction<TileRows + 4>(rowsPerTile);
  }
  return reinterpret_cast<const void*>(&conv_unroll_matmul<TileRows>);
}

KernelHandle unrollGemmHandle(const ConvProblem& p, size_t index) {
  if (index == 0) return {reinterpret_cast<const void*>(&conv_unroll_input), 0};
  return {matmulFunction(rowTilingOf(p.outChannels).rowsPerTile), 0};
}

}  // namespace

extern const GpuKernel kUnrollGemmKernel{unrollGemmUnsupported, unrollGemmGeometry,
                                         runWithoutEpilogue<launchUnrollGemm>, nullptr, unrollGemmHandle};

}  // namespace convscope::gpu
