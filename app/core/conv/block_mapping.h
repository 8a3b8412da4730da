// Which block and thread of a kernel launch compute a given output pixel, and what that block
// covers: the GPU mapping view's arithmetic, from the launch geometry alone (KernelLaunchGeometry::
// order), so that it works without a GPU and without knowing the kernel. Plain C++: tests check
// it without widgets.
#pragma once

#include <cstdint>
#include <string>

#include "app/core/conv/conv_problem.h"
#include "app/core/conv/variant_table.h"

namespace convscope {

struct PixelRect {
  int top = 0, left = 0, bottom = 0, right = 0;  // inclusive bounds; empty when bottom < top
  bool empty() const { return bottom < top || right < left; }
  bool contains(int y, int x) const { return y >= top && y <= bottom && x >= left && x <= right; }
};

struct BlockUnderPixel {
  bool described = false;         // false: the geometry does not say (BlockOrder::kNotDescribed)
  int64_t block = -1;             // the block's place in the kernel's list of blocks
  int64_t blockIdxX = -1;         // the blockIdx.x that runs it: block % gridX (grid-stride)
  int64_t pass = 0;               // which grid-stride pass: block / gridX
  int threadX = -1, threadY = 0;  // the thread: (x, y) of the tile, or t of a 1-D block
  // The block's part of this pixel's output map (n, m), in output pixels: a tile, or the rows a
  // run of flat outputs touches (then `pixelsInMap` says how many of them are the block's).
  PixelRect outputs;
  int64_t pixelsInMap = 0;
  // The input pixels the block reads for this map, per input channel: the tile it stages in
  // shared memory (halo included) for tiled kernels, else the union of its outputs' windows,
  // unclipped (it may hang over the padding).
  PixelRect input;
  bool inputStagedInShared = false;
};

// `image`, `map`, `oh`, `ow`: the output pixel. Throws convscope::Error when it lies outside the
// problem's output.
BlockUnderPixel blockUnderPixel(const ConvProblem& problem, const KernelLaunchGeometry& launch, int image, int map,
                                int oh, int ow);

// Per-block figures of a launch, estimated from the geometry where no GPU is asked: how many
// blocks fit on one multiprocessor given its threads and shared memory (registers unknown), and
// the occupancy that gives.
struct SmLimits {
  std::string name;  // "H100 (SM 9.0)"
  int maxThreadsPerSm = 2048;
  int maxBlocksPerSm = 32;
  int64_t sharedBytesPerSm = 228 * 1024;
  int64_t reservedSharedPerBlock = 1024;  // the runtime's own, per block (sm_80 and later)
  int maxWarpsPerSm = 64;
};
SmLimits hopperSmLimits();

struct OccupancyEstimate {
  int blocksPerSm = 0;
  int64_t warpsPerSm = 0;
  double occupancy = 0.0;  // active warps over the SM's maximum
  std::string limitedBy;   // "threads", "shared memory", "blocks per SM"
};
OccupancyEstimate estimateOccupancy(const KernelLaunchGeometry& launch, const SmLimits& sm);

// Loads from global memory per output element, from the geometry: direct kernels read
// C*KH*KW inputs and weights each; tiled ones the staged tile shared by the tile's outputs (plus
// the weights); matrix tiles a depth-long column of X and row of W shared by the tile. Negative
// where the geometry does not say (a student's kernel loads as it chooses).
struct LoadsPerOutput {
  double input = 0.0;
  double weights = 0.0;
};
LoadsPerOutput globalLoadsPerOutput(const ConvProblem& problem, const KernelLaunchGeometry& launch);

}  // namespace convscope
