// The host side of the tiled kernels of course steps 2 and 3 (02_tiled_shared.cu and
// 03_constant_weights.cu, which differ only in where their weights are read from): the input tile
// a block stages, whether it fits, and the launch the mapping view draws. One plan, so that the
// two steps the course compares stage exactly the same tiles.
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu::input_tile {

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
  int64_t bytesPerChannel() const { return int64_t{rows} * pitch * static_cast<int64_t>(sizeof(float)); }
};

inline InputTile inputTileOf(const ConvProblem& p) {
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

// Why one channel's input tile does not fit in a block's shared memory, or "".
inline std::string inputTileUnsupportedReason(const ConvProblem& p) {
  const InputTile t = inputTileOf(p);
  if (t.bytesPerChannel() <= kMaxSharedBytes) return {};
  return "its " + std::to_string(t.rows) + "x" + std::to_string(t.cols) +
         " input tile per channel needs more than the " + std::to_string(kMaxSharedBytes / 1024) +
         " KB of shared memory a block gets";
}

// The launch of `kernel` (a kTile x kTile block per (image, tile row, tile column, map)); `more`
// ends the mapping's words with what the variant does besides.
inline KernelLaunchGeometry inputTileGeometry(const ConvProblem& p, const char* kernel, const std::string& more = {}) {
  const InputTile t = inputTileOf(p);
  KernelLaunchGeometry g;
  g.kernel = kernel;
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
      std::to_string(t.rows) + "x" + std::to_string(t.cols) + " per channel) for up to " +
      std::to_string(t.channelsPerStage) + " channels at a time" + more;
  return g;
}

}  // namespace convscope::gpu::input_tile
