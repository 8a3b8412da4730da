// The GPU mapping view's arithmetic (app/core/conv/block_mapping.h): which block and thread of a
// launch compute an output pixel. Checked against simulations of the kernels' own loops, with
// their index arithmetic copied from gpu/kernels/*.cu (the grid-stride loop over blocks, the
// decomposition of the block index, the thread's place), run over every block and thread of a
// small grid, so that grid-stride passes, partial tiles and odd sizes all occur. With CUDA, the
// real rows' geometry is checked to be the one these simulations assume.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <tuple>

#include "app/core/conv/block_mapping.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/util/error.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

struct Owner {
  int64_t blockIdxX = -1;
  int64_t pass = -1;
  int threadX = -1, threadY = -1;
  int count = 0;  // how many threads computed it: exactly one
};
using Pixel = std::tuple<int, int, int, int>;  // image, map, row, column

ConvProblem oddProblem(int outChannels) {
  ConvProblem p;
  p.batch = 3;
  p.inChannels = 5;
  p.inHeight = 41;
  p.inWidth = 19;
  p.outChannels = outChannels;
  p.kernelHeight = 3;
  p.kernelWidth = 5;
  p.strideHeight = 2;
  p.strideWidth = 1;
  p.padTop = 1;
  p.padLeft = 2;
  p.padBottom = 0;
  p.padRight = 1;
  return p;
}

// gpu/kernels/01_baseline.cu (and 10_fused_epilogue.cu): i = blockIdx.x * 256 + threadIdx.x,
// i += gridDim.x * 256, i the flat NCHW output index.
std::map<Pixel, Owner> simulateFlat(const ConvProblem& p, int threads, int gridX) {
  std::map<Pixel, Owner> owners;
  const int64_t total = p.outputElements();
  for (int bx = 0; bx < gridX; ++bx)
    for (int t = 0; t < threads; ++t) {
      int pass = 0;
      for (int64_t i = int64_t{bx} * threads + t; i < total; i += int64_t{gridX} * threads, ++pass) {
        const int ow = static_cast<int>(i % p.outWidth());
        int64_t rest = i / p.outWidth();
        const int oh = static_cast<int>(rest % p.outHeight());
        rest /= p.outHeight();
        const int m = static_cast<int>(rest % p.outChannels);
        const int n = static_cast<int>(rest / p.outChannels);
        Owner& o = owners[{n, m, oh, ow}];
        o = {bx, pass, t, 0, o.count + 1};
      }
    }
  return owners;
}

// gpu/kernels/02_tiled_shared.cu, 03_constant_weights.cu: b = blockIdx.x, b += gridDim.x; m = b %
// M, then tile column, tile row, image; thread (tx, ty) of the Tile x Tile patch.
std::map<Pixel, Owner> simulateTiles(const ConvProblem& p, int tile, int gridX) {
  std::map<Pixel, Owner> owners;
  const int tilesX = (p.outWidth() + tile - 1) / tile;
  const int tilesY = (p.outHeight() + tile - 1) / tile;
  const int64_t totalBlocks = int64_t{p.batch} * tilesY * tilesX * p.outChannels;
  for (int bx = 0; bx < gridX; ++bx) {
    int pass = 0;
    for (int64_t b = bx; b < totalBlocks; b += gridX, ++pass) {
      const int m = static_cast<int>(b % p.outChannels);
      int64_t rest = b / p.outChannels;
      const int tileX = static_cast<int>(rest % tilesX);
      rest /= tilesX;
      const int tileY = static_cast<int>(rest % tilesY);
      const int n = static_cast<int>(rest / tilesY);
      for (int ty = 0; ty < tile; ++ty)
        for (int tx = 0; tx < tile; ++tx) {
          const int oh = tileY * tile + ty, ow = tileX * tile + tx;
          if (oh >= p.outHeight() || ow >= p.outWidth()) continue;
          Owner& o = owners[{n, m, oh, ow}];
          o = {bx, pass, tx, ty, o.count + 1};
        }
    }
  }
  return owners;
}

// gpu/kernels/04_unroll_gemm.cu / 05_fused_unroll_gemm.cu: rowTiles = ceil(M / 32) tiles of
// rowsPerTile = ceil(M / rowTiles) rounded up to 4 maps; blocks b += gridDim.x, m0 = (b % rowTiles)
// * rowsPerTile, j0 = b / rowTiles * 512; thread tid holds columns j0 + tid + j * 128, j < 4.
struct MatrixTiles {
  int rowTiles, rowsPerTile;
};
MatrixTiles matrixTilesOf(int outChannels) {
  const int tiles = (outChannels + 31) / 32;
  const int rows = (outChannels + tiles - 1) / tiles;
  return {tiles, (rows + 3) / 4 * 4};
}
std::map<Pixel, Owner> simulateMatrix(const ConvProblem& p, int gridX) {
  constexpr int kThreads = 128, kColsPerThread = 4, kTileCols = kThreads * kColsPerThread;
  const MatrixTiles rows = matrixTilesOf(p.outChannels);
  const int64_t outPlane = int64_t{p.outHeight()} * p.outWidth();
  const int64_t cols = p.batch * outPlane;
  const int64_t totalBlocks = (cols + kTileCols - 1) / kTileCols * rows.rowTiles;
  std::map<Pixel, Owner> owners;
  for (int bx = 0; bx < gridX; ++bx) {
    int pass = 0;
    for (int64_t b = bx; b < totalBlocks; b += gridX, ++pass) {
      const int m0 = static_cast<int>(b % rows.rowTiles) * rows.rowsPerTile;
      const int64_t j0 = b / rows.rowTiles * kTileCols;
      for (int tid = 0; tid < kThreads; ++tid)
        for (int j = 0; j < kColsPerThread; ++j) {
          const int64_t col = j0 + tid + j * kThreads;
          if (col >= cols) continue;
          const int n = static_cast<int>(col / outPlane);
          const int pos = static_cast<int>(col % outPlane);
          for (int r = 0; r < rows.rowsPerTile && m0 + r < p.outChannels; ++r) {
            Owner& o = owners[{n, m0 + r, pos / p.outWidth(), pos % p.outWidth()}];
            o = {bx, pass, tid, 0, o.count + 1};
          }
        }
    }
  }
  return owners;
}

// Every output pixel: one owner, and blockUnderPixel names it.
void expectSameOwners(const ConvProblem& p, const KernelLaunchGeometry& g, const std::map<Pixel, Owner>& owners) {
  ASSERT_EQ(static_cast<int64_t>(owners.size()), p.outputElements()) << "the simulation covers the output";
  int mismatches = 0;
  for (const auto& [pixel, owner] : owners) {
    const auto [n, m, oh, ow] = pixel;
    ASSERT_EQ(owner.count, 1);
    const BlockUnderPixel b = blockUnderPixel(p, g, n, m, oh, ow);
    ASSERT_TRUE(b.described);
    const bool same =
        b.blockIdxX == owner.blockIdxX && b.pass == owner.pass && b.threadX == owner.threadX &&
        ((g.order != BlockOrder::kMapTiles && g.order != BlockOrder::kGridTiles) || b.threadY == owner.threadY);
    if (!same && ++mismatches <= 5)
      ADD_FAILURE() << "pixel (" << n << ", " << m << ", " << oh << ", " << ow << "): view says blockIdx.x "
                    << b.blockIdxX << " pass " << b.pass << " thread " << b.threadX << "," << b.threadY
                    << "; the kernel's loop gives " << owner.blockIdxX << " pass " << owner.pass << " thread "
                    << owner.threadX << "," << owner.threadY;
    EXPECT_TRUE(b.outputs.contains(oh, ow));
    // The pixel's own window lies inside the input the block reads.
    EXPECT_TRUE(b.input.contains(oh * p.strideHeight - p.padTop, ow * p.strideWidth - p.padLeft));
    EXPECT_TRUE(b.input.contains(oh * p.strideHeight - p.padTop + p.kernelHeight - 1,
                                 ow * p.strideWidth - p.padLeft + p.kernelWidth - 1));
  }
  EXPECT_EQ(mismatches, 0);
}

KernelLaunchGeometry flatLaunch(int threads, int gridX) {
  KernelLaunchGeometry g;
  g.blockX = threads;
  g.gridX = gridX;
  g.order = BlockOrder::kFlatOutput;
  return g;
}

KernelLaunchGeometry tileLaunch(int tile, int gridX) {
  KernelLaunchGeometry g;
  g.blockX = g.blockY = tile;
  g.tileHeight = g.tileWidth = tile;
  g.gridX = gridX;
  g.order = BlockOrder::kMapTiles;
  return g;
}

KernelLaunchGeometry matrixLaunch(int outChannels, int gridX) {
  KernelLaunchGeometry g;
  g.blockX = 128;
  g.tileHeight = matrixTilesOf(outChannels).rowsPerTile;
  g.tileWidth = 512;
  g.gridX = gridX;
  g.order = BlockOrder::kMatrixTiles;
  return g;
}

TEST(BlockMapping, FlatOutputIsTheBaselineKernelsLoopWithGridStride) {
  const ConvProblem p = oddProblem(7);
  for (int gridX : {7, 1000}) {  // 7: several grid-stride passes; 1000: more blocks than work
    SCOPED_TRACE(gridX);
    expectSameOwners(p, flatLaunch(256, gridX), simulateFlat(p, 256, gridX));
  }
}

TEST(BlockMapping, MapTilesAreTheTiledKernelsBlocksMapFastest) {
  const ConvProblem p = oddProblem(7);  // 20x18 output: 2x2 tiles of 16x16, partial in both directions
  for (int gridX : {5, 4096}) {
    SCOPED_TRACE(gridX);
    expectSameOwners(p, tileLaunch(16, gridX), simulateTiles(p, 16, gridX));
  }
  // The staged tile is the kernel's: ((16-1)*stride + K) per side from the tile's origin.
  const BlockUnderPixel b = blockUnderPixel(p, tileLaunch(16, 5), 2, 3, 10, 16);
  EXPECT_EQ(b.input.top, 0 * 16 * 2 - 1);
  EXPECT_EQ(b.input.bottom - b.input.top + 1, 15 * 2 + 3);
  EXPECT_EQ(b.input.left, 1 * 16 * 1 - 2);
  EXPECT_EQ(b.input.right - b.input.left + 1, 15 * 1 + 5);
  EXPECT_TRUE(b.inputStagedInShared);
  EXPECT_EQ(b.pixelsInMap, 16 * 2);                   // the top right-hand tile, partial: 16 rows x 2 columns
  EXPECT_EQ(b.block, ((2 * 2 + 0) * 2 + 1) * 7 + 3);  // (image 2 of 2x2 tiles, tile row 0, tile column 1, map 3)
}

// A student's kernel (docs/your-kernel.md, the launch geometry): grid (ceil(W / tile), ceil(H /
// tile), N * M), block (tile, tile); blockIdx.z = n * M + m; thread (tx, ty) computes output
// (blockIdx.y * tile + ty, blockIdx.x * tile + tx). Blocks counted as the GPU does, x fastest.
TEST(BlockMapping, GridTilesAreTheStudentKernelsContract) {
  const ConvProblem p = oddProblem(7);
  constexpr int kTile = 8;
  const int tilesX = (p.outWidth() + kTile - 1) / kTile, tilesY = (p.outHeight() + kTile - 1) / kTile;
  std::map<Pixel, Owner> owners;
  std::map<Pixel, int64_t> linearBlock;
  for (int bz = 0; bz < p.batch * p.outChannels; ++bz)
    for (int by = 0; by < tilesY; ++by)
      for (int bx = 0; bx < tilesX; ++bx)
        for (int ty = 0; ty < kTile; ++ty)
          for (int tx = 0; tx < kTile; ++tx) {
            const int oh = by * kTile + ty, ow = bx * kTile + tx;
            if (oh >= p.outHeight() || ow >= p.outWidth()) continue;  // the kernel's edge guard
            const Pixel pixel{bz / p.outChannels, bz % p.outChannels, oh, ow};
            Owner& o = owners[pixel];
            o = {bx, 0, tx, ty, o.count + 1};
            linearBlock[pixel] = (int64_t{bz} * tilesY + by) * tilesX + bx;
          }
  KernelLaunchGeometry g;
  g.blockX = g.blockY = g.tileWidth = g.tileHeight = kTile;
  g.gridX = tilesX;
  g.gridY = tilesY;
  g.gridZ = p.batch * p.outChannels;
  g.order = BlockOrder::kGridTiles;
  expectSameOwners(p, g, owners);
  for (const auto& [pixel, block] : linearBlock) {
    const auto [n, m, oh, ow] = pixel;
    ASSERT_EQ(blockUnderPixel(p, g, n, m, oh, ow).block, block);
  }
  // A block smaller than its tile: the block and its outputs are known, the thread is the kernel's choice.
  g.blockX = g.blockY = kTile / 2;
  const BlockUnderPixel half = blockUnderPixel(p, g, 1, 2, 9, 3);
  EXPECT_EQ(half.block, ((int64_t{1} * p.outChannels + 2) * tilesY + 1) * tilesX + 0);
  EXPECT_EQ(half.threadX, -1);
  EXPECT_EQ(half.outputs.top, 8);
  EXPECT_EQ(half.outputs.left, 0);
  EXPECT_FALSE(half.inputStagedInShared);
  EXPECT_LT(globalLoadsPerOutput(p, g).input, 0.0);  // not known: the kernel's own
}

TEST(BlockMapping, MatrixTilesAreTheUnrollGemmBlocksForAnyMapCount) {
  for (int maps : {5, 12, 24, 33, 64, 100}) {
    SCOPED_TRACE(maps);
    const ConvProblem p = oddProblem(maps);
    for (int gridX : {3, 100000}) expectSameOwners(p, matrixLaunch(maps, gridX), simulateMatrix(p, gridX));
  }
}

TEST(BlockMapping, RefusesAPixelOutsideTheOutputNamingIt) {
  const ConvProblem p = oddProblem(7);
  try {
    blockUnderPixel(p, flatLaunch(256, 10), 0, 7, 0, 0);
    FAIL() << "map 7 of 7 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("map 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(blockUnderPixel(p, flatLaunch(256, 10), 0, 0, p.outHeight(), 0), Error);
  EXPECT_THROW(blockUnderPixel(p, flatLaunch(256, 10), 3, 0, 0, 0), Error);
}

TEST(BlockMapping, UndescribedLaunchesSayNothing) {
  KernelLaunchGeometry g;  // kNotDescribed, as cuDNN's
  const BlockUnderPixel b = blockUnderPixel(oddProblem(7), g, 0, 0, 0, 0);
  EXPECT_FALSE(b.described);
  EXPECT_EQ(b.block, -1);
  EXPECT_LT(globalLoadsPerOutput(oddProblem(7), g).input, 0.0);
}

// Occupancy from threads and shared memory against the H100's limits (64 warps, 32 blocks and
// 228 KB per SM, 1 KB reserved per block), worked out by hand.
TEST(BlockMapping, OccupancyEstimateFollowsTheSmLimits) {
  const SmLimits sm = hopperSmLimits();
  KernelLaunchGeometry g = flatLaunch(256, 1);
  OccupancyEstimate e = estimateOccupancy(g, sm);
  EXPECT_EQ(e.blocksPerSm, 8);  // 64 warps / 8 warps per block
  EXPECT_EQ(e.limitedBy, "threads");
  EXPECT_DOUBLE_EQ(e.occupancy, 1.0);
  g.sharedBytes = 40 * 1024;  // 228 KB / 41 KB = 5 blocks
  e = estimateOccupancy(g, sm);
  EXPECT_EQ(e.blocksPerSm, 5);
  EXPECT_EQ(e.limitedBy, "shared memory");
  EXPECT_DOUBLE_EQ(e.occupancy, 40.0 / 64.0);
  g = flatLaunch(32, 1);  // 1 warp: 32 blocks per SM at most
  e = estimateOccupancy(g, sm);
  EXPECT_EQ(e.blocksPerSm, 32);
  EXPECT_EQ(e.limitedBy, "blocks per SM");
  EXPECT_DOUBLE_EQ(e.occupancy, 0.5);
}

TEST(BlockMapping, LoadsPerOutputCountTheTilesReuse) {
  const ConvProblem p = oddProblem(7);  // C=5, K=3x5, stride 2x1
  const double depth = 5.0 * 3 * 5;
  LoadsPerOutput l = globalLoadsPerOutput(p, flatLaunch(256, 1));
  EXPECT_DOUBLE_EQ(l.input, depth);
  EXPECT_DOUBLE_EQ(l.weights, depth);
  l = globalLoadsPerOutput(p, tileLaunch(16, 1));
  EXPECT_DOUBLE_EQ(l.input, 5.0 * (15 * 2 + 3) * (15 * 1 + 5) / 256.0);
  l = globalLoadsPerOutput(p, matrixLaunch(7, 1));  // tile: 8 maps x 512 columns
  EXPECT_DOUBLE_EQ(l.input, depth / 8.0);
  EXPECT_DOUBLE_EQ(l.weights, depth / 512.0);
}

// With CUDA, the rows' own geometry (the launchers read it) is the one simulated above: the
// kernels' block orders, tile sizes and thread counts. Needs no GPU.
TEST(BlockMapping, RealRowsLaunchWhatTheSimulationsAssume) {
  if (!CONVSCOPE_TEST_BUILT_WITH_CUDA)
    GPU_TEST_SKIP() << "this build has no CUDA, so the GPU rows carry no launch geometry";
  const ConvProblem p = oddProblem(24);
  int checked = 0;
  for (const ConvVariant& v : convVariants()) {
    if (!v.launchGeometry || !v.unsupportedReasonFor(p).empty()) continue;
    for (const KernelLaunchGeometry& g : v.launchGeometry(p)) {
      SCOPED_TRACE(v.id + " " + g.kernel);
      if (g.kernel == "conv_baseline" || g.kernel == "conv_fused_epilogue") {
        EXPECT_EQ(g.order, BlockOrder::kFlatOutput);
        expectSameOwners(p, g, simulateFlat(p, static_cast<int>(g.threadsPerBlock()), g.gridX));
        ++checked;
      } else if (g.kernel == "conv_tiled_shared" || g.kernel == "conv_constant_weights") {
        EXPECT_EQ(g.order, BlockOrder::kMapTiles);
        EXPECT_EQ(g.tileHeight, 16);
        EXPECT_EQ(g.tileWidth, 16);
        expectSameOwners(p, g, simulateTiles(p, 16, g.gridX));
        ++checked;
      } else if (g.kernel == "conv_unroll_matmul" || g.kernel == "conv_fused_unroll_matmul") {
        EXPECT_EQ(g.order, BlockOrder::kMatrixTiles);
        EXPECT_EQ(g.threadsPerBlock(), 128);
        EXPECT_EQ(g.tileWidth, 512);
        EXPECT_EQ(g.tileHeight, matrixTilesOf(p.outChannels).rowsPerTile);
        expectSameOwners(p, g, simulateMatrix(p, g.gridX));
        ++checked;
      } else {
        EXPECT_EQ(g.order, BlockOrder::kNotDescribed) << "a described order without a simulation here";
      }
    }
  }
  EXPECT_EQ(checked, 6);
}

// On a GPU, the runtime reports every described kernel's registers and occupancy; its blocks per
// SM never exceed what threads alone allow (the estimate's bound).
TEST(BlockMapping, TheCudaRuntimeReportsTheKernelsOccupancy) {
  if (!gpuInfo().usable) GPU_TEST_SKIP() << "no GPU: " << gpuInfo().unusableReason;
  const ConvProblem p = oddProblem(24);
  int checked = 0;
  for (const ConvVariant& v : convVariants()) {
    if (!v.launchGeometry || !v.kernelHandle || !v.unsupportedReasonFor(p).empty()) continue;
    const std::vector<KernelLaunchGeometry> launches = v.launchGeometry(p);
    for (size_t i = 0; i < launches.size(); ++i) {
      SCOPED_TRACE(v.id + " " + launches[i].kernel);
      const std::optional<KernelOccupancy> o =
          kernelOccupancy(v.kernelHandle(p, i), static_cast<int>(launches[i].threadsPerBlock()));
      ASSERT_TRUE(o.has_value());
      EXPECT_GT(o->registersPerThread, 0);
      EXPECT_LE(o->registersPerThread, 255);
      EXPECT_GE(o->blocksPerSm, 1);
      EXPECT_LE(o->blocksPerSm, estimateOccupancy(launches[i], hopperSmLimits()).blocksPerSm);
      EXPECT_GT(o->occupancy, 0.0);
      EXPECT_LE(o->occupancy, 1.0);
      ++checked;
    }
  }
  EXPECT_GE(checked, 6);
}

TEST(BlockMapping, NoOccupancyIsReportedWithoutAGpu) {
  if (gpuInfo().usable) GTEST_SKIP() << "a GPU is here: the test above checks what it reports";
  int anything = 0;
  EXPECT_FALSE(kernelOccupancy(KernelHandle{&anything, 0}, 256).has_value());
}

}  // namespace
}  // namespace convscope
