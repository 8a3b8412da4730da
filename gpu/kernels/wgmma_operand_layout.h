// How the wgmma-from-shared-memory path (wgmma_shared_operands.cuh) stages an image so that the
// tensor cores read the im2col matrix straight from it, through descriptors, with no load of A
// into registers and no im2col copy. Plain C++, for the host and the device: the tests replay
// the layout on the host, with no GPU, against the convolution written from its definition
// (tests/core/test_wgmma_operand_layout.cpp).
//
// A wgmma reads A (64 product rows x 8 taps) as 8 x 2 "core matrices": 8 rows of 16 contiguous
// bytes each, core matrices along M a "stride" apart and the two along K a "leading" offset
// apart, both free. So:
//   - a product tile is 8 output rows x 8 output columns, and core matrix j is output row j's 8
//     columns: consecutive output columns must be 16 bytes apart in shared memory, and output row
//     j + 1 one staged row further (the stride);
//   - an image is staged as planes of 16-byte entries, [plane][y][x], one entry a staged pixel,
//     so that a k-step's core matrix is a window into a plane at a fixed offset, the same for every
//     tile. Two packings of an entry, whichever needs fewer k-steps:
//       channel quads (4 or more channels, the course's second layer): entry (q, y, x) holds
//       channels 4q .. 4q + 3 of pixel (y, x); a k-step is one kernel row, one quad and two
//       neighbouring taps (kw, kw + 1): its two core matrices are one entry apart;
//       tap quads (fewer channels, the course's first layer, one channel): entry (c, y, x) holds
//       pixels x .. x + 3 of channel c's row y; a k-step is eight neighbouring taps of a kernel row,
//       its two core matrices four entries apart.
// Staged coordinates include the padding: entry (y, x) is input pixel (y - padTop, x - padLeft),
// zero outside the input. Taps past the kernel (kw >= kernelWidth, an odd pair, a group of eight)
// are weighted 0 and read finite staged values: zeros, or a neighbouring input.
#pragma once

#include <algorithm>
#include <cstdint>

#include "app/core/conv/conv_problem.h"
#include "gpu/kernels/mma_staging.h"

namespace convscope::gpu::implicit_gemm {

constexpr int kEntryFloats = 4;  // a staged entry: one 16-byte row of a core matrix
constexpr int kTileSide = 8;     // a product tile: 8 x 8 output pixels, one wgmma's 64 rows
constexpr int kStepTaps = 8;     // a TF32 k-step

enum class EntryPacking : int { kChannelQuads = 0, kTapQuads = 1 };

struct OperandLayout {
  EntryPacking packing;
  int channels, inHeight, inWidth, padTop, padLeft, kernelHeight, kernelWidth;
  int planes;                      // channel quads: ceil(channels / 4); tap quads: channels
  int stagedHeight, stagedWidth;   // entries of a plane
  int planeEntries, imageEntries;  // stagedHeight * stagedWidth; planes * planeEntries
  int tileRows, tileCols;          // product tiles an image: ceil(rows computed / 8) x ceil(columns / 8)
  int kSteps;                      // outer x middle x inner, in this order
  int outerCount, middleCount, innerCount;
  int outerStride, middleStride, innerStride;  // entries a k-step's A moves per loop
  int leadingEntries;                          // between a k-step's two core matrices: 1 or 4
};

// The layout for `p` (stride 1), computing `rows` x `cols` output pixels an image (the whole conv
// output, or the part its pooling windows cover).
inline OperandLayout operandLayoutFor(const ConvProblem& p, int rows, int cols) {
  OperandLayout l{};
  l.channels = p.inChannels;
  l.inHeight = p.inHeight;
  l.inWidth = p.inWidth;
  l.padTop = p.padTop;
  l.padLeft = p.padLeft;
  l.kernelHeight = p.kernelHeight;
  l.kernelWidth = p.kernelWidth;
  l.tileRows = (rows + kTileSide - 1) / kTileSide;
  l.tileCols = (cols + kTileSide - 1) / kTileSide;
  const int quads = (p.inChannels + kEntryFloats - 1) / kEntryFloats;
  const int pairs = (p.kernelWidth + 1) / 2;
  const int groups = (p.kernelWidth + kStepTaps - 1) / kStepTaps;
  const int channelQuadSteps = p.kernelHeight * quads * pairs;
  const int tapQuadSteps = p.inChannels * p.kernelHeight * groups;
  l.packing = tapQuadSteps < channelQuadSteps ? EntryPacking::kTapQuads : EntryPacking::kChannelQuads;
  l.stagedHeight = l.tileRows * kTileSide + p.kernelHeight - 1;
  if (l.packing == EntryPacking::kChannelQuads) {
    l.planes = quads;
    // The last pair's second tap starts 2 pairs - 1 entries past the tile's last column.
    l.stagedWidth = l.tileCols * kTileSide + 2 * pairs - 1;
  } else {
    l.planes = p.inChannels;
    // The last group's second core matrix starts 8 groups - 4 entries past the last column.
    l.stagedWidth = l.tileCols * kTileSide + kStepTaps * groups - 4;
  }
  l.planeEntries = l.stagedHeight * l.stagedWidth;
  l.imageEntries = l.planes * l.planeEntries;
  if (l.packing == EntryPacking::kChannelQuads) {
    l.outerCount = p.kernelHeight, l.outerStride = l.stagedWidth;  // kernel rows
    l.middleCount = quads, l.middleStride = l.planeEntries;        // channel quads
    l.innerCount = pairs, l.innerStride = 2;                       // tap pairs
    l.leadingEntries = 1;
  } else {
    l.outerCount = p.inChannels, l.outerStride = l.planeEntries;  // channels
    l.middleCount = p.kernelHeight, l.middleStride = l.stagedWidth;
    l.innerCount = groups, l.innerStride = kStepTaps;  // groups of eight taps
    l.leadingEntries = kEntryFloats;
  }
  l.kSteps = l.outerCount * l.middleCount * l.innerCount;
  return l;
}

// Where k-step ks's first core matrix starts, in entries from the tile's origin entry (plane 0,
// the tile's first output row and column).
CONVSCOPE_HOST_DEVICE int kStepEntryOffset(const OperandLayout& l, int ks) {
  const int inner = ks % l.innerCount;
  const int middle = ks / l.innerCount % l.middleCount;
  const int outer = ks / (l.innerCount * l.middleCount);
  return outer * l.outerStride + middle * l.middleStride + inner * l.innerStride;
}

// The input value float t of entry (plane, y, x) holds: its channel and input pixel, or
// valid = false for a zero (padding, outside the input, a channel past the last).
struct EntrySource {
  bool valid;
  int c, y, x;
};

CONVSCOPE_HOST_DEVICE EntrySource entrySource(const OperandLayout& l, int plane, int y, int x, int t) {
  EntrySource s{};
  if (l.packing == EntryPacking::kChannelQuads) {
    s.c = kEntryFloats * plane + t;
    s.y = y - l.padTop;
    s.x = x - l.padLeft;
  } else {
    s.c = plane;
    s.y = y - l.padTop;
    s.x = x + t - l.padLeft;
  }
  s.valid = s.c < l.channels && s.y >= 0 && s.y < l.inHeight && s.x >= 0 && s.x < l.inWidth;
  return s;
}

// Where weight (c, kh, kw) of a map sits in the k-steps: k-step, core matrix (half) and its
// column (the tap within the entry).
struct KStepTap {
  int kStep, half, tap;
};

CONVSCOPE_HOST_DEVICE KStepTap kStepTapOfWeight(const OperandLayout& l, int c, int kh, int kw) {
  if (l.packing == EntryPacking::kChannelQuads)
    return {(kh * l.middleCount + c / kEntryFloats) * l.innerCount + kw / 2, kw % 2, c % kEntryFloats};
  return {(c * l.middleCount + kh) * l.innerCount + kw / kStepTaps, kw % kStepTaps / kEntryFloats, kw % kEntryFloats};
}

}  // namespace convscope::gpu::implicit_gemm
