// How the tensor-core kernels (implicit_gemm_mma.cuh) lay a step's images out in shared memory
// so that a lane's whole A fragment arrives with one `ldmatrix`, and how the reduction is cut
// into "runs" that make that possible. Plain C++, for the host and the device: the tests check on
// the host, with no GPU, that the layout and the runs reproduce the convolution
// (tests/core/test_mma_staging.cpp).
//
// ldmatrix hands each lane four 32-bit values of an m16n8k8 TF32 fragment from four 8x8 (16-bit)
// matrices whose rows are 16 contiguous, 16-byte aligned bytes: four floats of one product row.
// So the reduction is ordered in runs of four taps that lie side by side in the staged images:
//   - channels last (inChannels a multiple of 4, or a kernel narrower than 4): the images staged
//     as [y][x][channel], the channels padded with zeros to a multiple of 4; a run is four
//     channels of one tap. Every offset is a multiple of 4, so every run starts aligned.
//   - shifted copies (other channel counts, kernels at least 4 wide: the course's first layer):
//     the images staged as they lie ([channel][y][x]) with three zero columns after each row,
//     and four copies, copy s shifted left by s floats; a run is four consecutive columns of one
//     kernel row (the kernel's width rounded up to 4, the extra taps weighted 0, reading the zero
//     columns or the next pixels' values). A pixel's runs start where its window starts, at
//     offset P; copy P % 4 holds them aligned.
// A k-step (8 taps) is two runs. The runs are the same for every product row; a lane adds its
// row's staged offset (made once a block) and the run's (a table), and ldmatrix does the rest.
// Taps weighted 0 still read staged values (the columns past a kernel read the next pixels', the
// extra run of an odd count repeats the last run): with finite inputs they add 0, but an Inf or
// NaN input within 3 columns to the right of a window, or under its last run, makes that output
// NaN (0 x Inf), where the convolution itself may be finite. Images and activations the engine
// produces are finite; the direct kernels (gpu-restrict-unroll) read only the window's taps.
#pragma once

#include <algorithm>
#include <cstdint>

#include "app/core/conv/conv_problem.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/host_device.h"

namespace convscope::gpu::implicit_gemm {

constexpr int kRunTaps = 4;        // taps of a run: one 16-byte row of an ldmatrix
constexpr int kShiftedCopies = 4;  // copies of the images in the shifted layout
constexpr int kWindowPixels = 4;   // product rows per 2x2 pooling window

enum class StagingMode : int { kChannelsLast = 0, kShiftedCopies = 1 };

// The staged layout of one step's images and the runs of the reduction. Sizes in floats.
struct StagedLayout {
  StagingMode mode;
  int channels, height, width;  // one input image
  int padTop, padLeft;
  int kernelHeight, kernelWidth, strideHeight, strideWidth;
  int channelsPadded;  // channels last: channels rounded up to 4; shifted copies: channels
  int rowPitch;        // between staged input rows; a multiple of 4
  int planeStride;     // shifted copies: between channel planes; a multiple of 4
  int imageStride;     // between staged images; a multiple of 4
  int copyStride;      // shifted copies: between the copies; a multiple of 4
  int realRuns;        // runs that hold taps
  int runs;            // realRuns rounded up to whole k-steps (two runs); the extra one repeats the last, weighted 0
};

constexpr StagingMode stagingModeFor(int channels, int kernelWidth) {
  return channels % kRunTaps == 0 || kernelWidth < kRunTaps ? StagingMode::kChannelsLast : StagingMode::kShiftedCopies;
}

CONVSCOPE_HOST_DEVICE int runsPerKernelRow(const StagedLayout& l) {
  return (l.kernelWidth + kRunTaps - 1) / kRunTaps;
}

CONVSCOPE_HOST_DEVICE int realRunsOf(const StagedLayout& l) {
  return l.mode == StagingMode::kChannelsLast ? l.kernelHeight * l.kernelWidth * (l.channelsPadded / kRunTaps)
                                              : l.channels * l.kernelHeight * runsPerKernelRow(l);
}

// The weight that tap t of run q multiplies: its index (c, kh, kw) in one map's [c][kh][kw]
// weights, or -1 for a tap weighted 0 (a padded channel, a column past the kernel, the extra run).
CONVSCOPE_HOST_DEVICE int weightIndexOfTap(const StagedLayout& l, int q, int t) {
  if (q >= l.realRuns) return -1;
  int c, kh, kw;
  if (l.mode == StagingMode::kChannelsLast) {
    const int groups = l.channelsPadded / kRunTaps;
    const int tap = q / groups;
    c = kRunTaps * (q - tap * groups) + t;
    kh = tap / l.kernelWidth;
    kw = tap - kh * l.kernelWidth;
    if (c >= l.channels) return -1;
  } else {
    const int perRow = runsPerKernelRow(l);
    const int row = q / perRow;  // c * kernelHeight + kh
    kw = kRunTaps * (q - row * perRow) + t;
    c = row / l.kernelHeight;
    kh = row - c * l.kernelHeight;
    if (kw >= l.kernelWidth) return -1;
  }
  return (c * l.kernelHeight + kh) * l.kernelWidth + kw;
}

// The run and tap that weight (c, kh, kw) of a map lies under: the inverse of weightIndexOfTap,
// so that the kernels can stage the weights reading them in order (coalesced, many loads in
// flight) and scatter each to its place.
struct RunTap {
  int run, tap;
};

CONVSCOPE_HOST_DEVICE RunTap runTapOfWeight(const StagedLayout& l, int c, int kh, int kw) {
  if (l.mode == StagingMode::kChannelsLast)
    return {(kh * l.kernelWidth + kw) * (l.channelsPadded / kRunTaps) + c / kRunTaps, c % kRunTaps};
  return {(c * l.kernelHeight + kh) * runsPerKernelRow(l) + kw / kRunTaps, kw % kRunTaps};
}

// Where run q starts, relative to a pixel's window: a multiple of 4 in either layout.
CONVSCOPE_HOST_DEVICE int runOffset(const StagedLayout& l, int q) {
  if (q >= l.realRuns) q = l.realRuns - 1;
  if (l.mode == StagingMode::kChannelsLast) {
    const int groups = l.channelsPadded / kRunTaps;
    const int tap = q / groups;
    const int kh = tap / l.kernelWidth;
    const int kw = tap - kh * l.kernelWidth;
    return kh * l.rowPitch + kw * l.channelsPadded + kRunTaps * (q - tap * groups);
  }
  const int perRow = runsPerKernelRow(l);
  const int row = q / perRow;
  const int c = row / l.kernelHeight;
  const int kh = row - c * l.kernelHeight;
  return c * l.planeStride + kh * l.rowPitch + kRunTaps * (q - row * perRow);
}

// The logical offset of output pixel (oh, ow)'s window origin in image slot `image`: in the
// layout itself (channels last) or in the unshifted images (shifted copies).
CONVSCOPE_HOST_DEVICE int windowOrigin(const StagedLayout& l, int image, int oh, int ow) {
  const int column = ow * l.strideWidth * (l.mode == StagingMode::kChannelsLast ? l.channelsPadded : 1);
  return image * l.imageStride + oh * l.strideHeight * l.rowPitch + column;
}

// Where a lane finds logical offset `origin` (a window origin) aligned: itself, or in copy
// origin % 4, where it lies at origin - origin % 4. Adding a run's offset (a multiple of 4) keeps
// the copy: stagedOffset(o) + runOffset(q) == stagedOffset(o + runOffset(q)).
CONVSCOPE_HOST_DEVICE int stagedOffset(const StagedLayout& l, int origin) {
  if (l.mode == StagingMode::kChannelsLast) return origin;
  const int shift = origin % kShiftedCopies;
  return shift * l.copyStride + origin - shift;
}

// The logical offset of input (c, y, x) of image slot `image`.
CONVSCOPE_HOST_DEVICE int stagedInputOffset(const StagedLayout& l, int image, int c, int y, int x) {
  if (l.mode == StagingMode::kChannelsLast)
    return image * l.imageStride + (y + l.padTop) * l.rowPitch + (x + l.padLeft) * l.channelsPadded + c;
  return image * l.imageStride + c * l.planeStride + (y + l.padTop) * l.rowPitch + x + l.padLeft;
}

// Floats of the staged layout for `images` image slots; zeroed once, then only inputs are written.
CONVSCOPE_HOST_DEVICE int stagedFloats(const StagedLayout& l, int images) {
  return l.mode == StagingMode::kChannelsLast ? images * l.imageStride : kShiftedCopies * l.copyStride;
}

// Product row m of a step: which image slot and output pixel it computes. Pooled, rows go by
// pooling window (image, window row, window column, then the window's four pixels).
struct ProductRow {
  int image;
  int oh, ow;
  int pixel;  // oh * outWidth + ow, or the pooling window's index when pooled
};

CONVSCOPE_HOST_DEVICE ProductRow productRow(int m, int pixelsPerImage, bool pooled, int pooledWidth, int outWidth) {
  ProductRow r;
  r.image = m / pixelsPerImage;
  const int q = m - r.image * pixelsPerImage;
  if (pooled) {
    const int window = q / kWindowPixels;
    const int d = q - window * kWindowPixels;
    const int ph = window / pooledWidth;
    const int pw = window - ph * pooledWidth;
    r.oh = 2 * ph + d / 2;
    r.ow = 2 * pw + d % 2;
    r.pixel = window;
  } else {
    r.oh = q / outWidth;
    r.ow = q - r.oh * outWidth;
    r.pixel = q;
  }
  return r;
}

// How the tensor cores take the weights (the product's B operand, k = the taps of a k-step's two
// runs, n = the maps), staged once a block in shared memory:
//   - kSync (mma.sync, any GPU from sm_80): as the lanes' fragments. For k-step ks and n-tile nt,
//     lane 4 (n % 8) + t holds tap t of run 2 ks and of run 2 ks + 1 side by side, one 8-byte
//     load; 3xTF32 follows them with the two rests, one 16-byte load.
//   - kWarpgroup (wgmma, sm_90a): as the "core matrices" the tensor cores read themselves, K-major
//     and not swizzled. A core matrix is 8 maps x 4 taps, a 16-byte row a map; a k-step's two runs
//     are two core matrices kCoreMatrixLeadingBytes apart, its n-tiles kCoreMatrixStrideBytes
//     apart, and k-step ks's first n-tile starts at float 64 (ks nTiles); 3xTF32's rests form a
//     second copy of the whole after the first.
enum class MmaPath : int { kSync = 0, kWarpgroup = 1 };

constexpr int kCoreMatrixLeadingBytes = 128;  // the wgmma descriptor's leading byte offset (K)
constexpr int kCoreMatrixStrideBytes = 256;   // its stride byte offset (N)

constexpr int kCoreMatrixFloats = kCoreMatrixLeadingBytes / 4;  // 8 maps x 4 taps
static_assert(kCoreMatrixStrideBytes == 2 * kCoreMatrixLeadingBytes,
              "an n-tile's core matrices are a k-step's two runs");

// Where tap t of run q for map n lies, in floats from the start of the staged weights; part 0 is
// the TF32 value, part 1 (3xTF32, `split`) the TF32 rounding of the rest.
CONVSCOPE_HOST_DEVICE int weightOperandOffset(MmaPath path, int nTiles, int kSteps, bool split, int q, int t, int n,
                                              int part) {
  const int ks = q / 2, j = q % 2, nt = n / 8, row = n % 8;
  if (path == MmaPath::kSync) return ((ks * nTiles + nt) * 32 + 4 * row + t) * (split ? 4 : 2) + 2 * part + j;
  return (part * kSteps + ks) * nTiles * 2 * kCoreMatrixFloats + (nt * 2 + j) * kCoreMatrixFloats + 4 * row + t;
}

// Floats the staged weights take, the same on both paths: kSteps x nTiles x 8 maps x 8 taps, twice
// for 3xTF32.
CONVSCOPE_HOST_DEVICE int weightOperandFloats(int nTiles, int kSteps, bool split) {
  return kSteps * nTiles * 64 * (split ? 2 : 1);
}

// A wgmma shared-memory descriptor, not swizzled (bits 62-63 zero), base offset 0: the start
// address and the leading (K) and stride (M or N) byte offsets, each in 16-byte units, in bits
// 0-13, 16-29 and 32-45.
CONVSCOPE_HOST_DEVICE uint64_t sharedMatrixDescriptor(uint32_t address, uint32_t leadingBytes, uint32_t strideBytes) {
  return static_cast<uint64_t>((address & 0x3FFFFu) >> 4) |
         (static_cast<uint64_t>((leadingBytes >> 4) & 0x3FFFu) << 16) |
         (static_cast<uint64_t>((strideBytes >> 4) & 0x3FFFu) << 32);
}

// The descriptor of the staged weights' core matrices starting at shared address `address`.
CONVSCOPE_HOST_DEVICE uint64_t coreMatrixDescriptor(uint32_t address) {
  return sharedMatrixDescriptor(address, kCoreMatrixLeadingBytes, kCoreMatrixStrideBytes);
}

// ---------------------------------------------------------------------------------------------
// Host side: the layout of a problem, and how evenly its ldmatrix rows spread over the banks.

// The layout for `p` staged `images` at a time: rows padded by `rowPad` floats (a multiple of
// 4) and, for shifted copies, the copies `copyResidue` floats past a multiple of 32 apart.
// Sizes must have been checked to fit an int (the plan declines larger tensors first).
inline StagedLayout stagedLayoutFor(const ConvProblem& p, int images, int rowPad, int copyResidue) {
  StagedLayout l{};
  l.mode = stagingModeFor(p.inChannels, p.kernelWidth);
  l.channels = p.inChannels;
  l.height = p.inHeight;
  l.width = p.inWidth;
  l.padTop = p.padTop;
  l.padLeft = p.padLeft;
  l.kernelHeight = p.kernelHeight;
  l.kernelWidth = p.kernelWidth;
  l.strideHeight = p.strideHeight;
  l.strideWidth = p.strideWidth;
  const int paddedHeight = p.inHeight + p.padTop + p.padBottom;
  const int paddedWidth = p.inWidth + p.padLeft + p.padRight;
  if (l.mode == StagingMode::kChannelsLast) {
    l.channelsPadded = roundUp(p.inChannels, kRunTaps);
    l.rowPitch = paddedWidth * l.channelsPadded + rowPad;
    l.imageStride = paddedHeight * l.rowPitch;
  } else {
    l.channelsPadded = p.inChannels;
    // Three zero columns after each row: a run's taps past the kernel (weighted 0) read the
    // next columns' values, and for the row's last pixels these zeros, never the next row.
    l.rowPitch = roundUp(paddedWidth + kRunTaps - 1, kRunTaps) + rowPad;
    l.planeStride = paddedHeight * l.rowPitch;
    l.imageStride = p.inChannels * l.planeStride;
    const int images32 = roundUp(images * l.imageStride, 32);
    l.copyStride = images32 + copyResidue;
  }
  l.realRuns = realRunsOf(l);
  l.runs = roundUp(l.realRuns, 2);
  return l;
}

// Extra shared-memory wavefronts of the ldmatrix reads of the first `rows` product rows: each
// group of 8 rows is one 8x16-byte matrix, read in one wavefront when its rows fall in 8
// different 16-byte bank groups. Runs shift every row alike, so run 0 stands for all.
inline int ldmatrixBankConflicts(const StagedLayout& l, int rows, int pixelsPerImage, bool pooled, int pooledWidth,
                                 int outWidth) {
  int extra = 0;
  for (int m0 = 0; m0 < rows; m0 += 8) {
    int inGroup[8] = {};
    int worst = 0;
    for (int m = m0; m < m0 + 8 && m < rows; ++m) {
      const ProductRow r = productRow(m, pixelsPerImage, pooled, pooledWidth, outWidth);
      const int group = stagedOffset(l, windowOrigin(l, r.image, r.oh, r.ow)) / kRunTaps % 8;
      worst = std::max(worst, ++inGroup[group]);
    }
    extra += worst - 1;
  }
  return extra;
}

}  // namespace convscope::gpu::implicit_gemm
