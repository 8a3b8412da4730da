// The machinery of the tensor-core variants (11_tensor_tf32.cu, 12_tensor_3xtf32.cu): the
// convolution as an implicit matrix product on `mma.sync` (m16n8k8, TF32 inputs, FP32
// accumulation), with the bias, the activation and a 2x2 pooling applied to the accumulators.
//
// The product: rows m are output pixels, columns n output maps, and the reduction k runs over the
// taps, so A[m][k] is the input under tap k of pixel m -- the im2col matrix, never written
// anywhere -- and B[k][n] the weight of tap k for map n. A persistent block keeps every weight in
// shared memory, already in the order of the mma's B fragments (one 8-byte load per lane and
// n-tile), and streams groups of whole images through shared memory: an asynchronous copy of the
// next group's images as they lie in memory while this group is computed, then one pass that
// rounds them to TF32 and arranges them in the layout of mma_staging.h, where every A fragment is
// one `ldmatrix`: a lane adds its row's staged offset (a table made once) and the k-step's run
// offsets (a table), and the instruction gathers the 16x8 tile of the im2col matrix.
// (The first version gathered each fragment with four scalar loads from per-tap tables: ncu
// counted about 48 gather instructions per 12 mma; docs/performance.md has both.)
//
// The pooling: when the plan fuses a 2x2, stride-2 pooling, rows are ordered by pooling window
// (image, window row, window column, then the window's four pixels), so the four values of a
// window sit in four consecutive rows of an accumulator tile: lanes 4 and 8 apart hold them, and
// shuffles between them give the maximum or the mean. Only the pooled output is written; the conv output
// never reaches memory, and pixels outside every window (an odd last row or column) are never
// computed.
//
// Precision: TF32 rounds each input to 10 bits of mantissa (a relative error of 2^-11) before
// the product; 3xTF32 splits each value into a TF32 part and the TF32 rounding of the rest and
// adds the three products that matter (big*small, small*big, big*big), which gives FP32-level
// products at three times the tensor-core work.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"
#include "gpu/kernels/direct_conv_tiles.cuh"
#include "gpu/kernels/epilogue.cuh"
#include "gpu/kernels/mma_staging.h"
#include "gpu/tensor_core_paths.h"

namespace convscope::gpu::implicit_gemm {

enum class Precision { kTf32, kTf32x3 };

// Output maps a warp computes at once: up to 4 n-tiles (32 maps), fixed at compile time so that
// the k-loop has no branches; the launcher picks the kernel whose NTiles fits the layer.
constexpr int kMaxNTilesPerWarp = 4;
constexpr int kMaxWarps = 16;

struct MmaConvArgs {
  const float* input;
  const float* weights;
  float* output;  // the pooled output when pooled
  ConvShape shape;
  FusedEpilogue epilogue;  // its pooling, when any: 2x2 windows of stride 2
  StagedLayout layout;     // how a step's images lie in shared memory, and the runs
  int imagesPerStep;       // images staged and computed together
  int numSteps;            // ceil(batch / imagesPerStep)
  int imageFloats;         // one image as it lies in memory: inChannels * inHeight * inWidth
  int rawFloats;           // a step's images as they lie in memory, rounded up to 4
  int stagedFloats;        // a step's images in the layout
  int vectorCopy;          // the raw copy in 16-byte pieces (16-byte aligned images of whole float4s)
  int pooledHeight, pooledWidth;
  int pixelsPerImage;  // product rows per image: outHeight * outWidth, or 4 per pooling window
  int kSteps;          // layout.runs / 2
  int nTilesPerWarp;   // the kernel's NTiles: ceil(outChannels / 8), at most kMaxNTilesPerWarp
  int nTiles;          // ceil(outChannels / 8) rounded up to whole warps' n-tiles (the rest weighted 0)
  int nChunks;         // nTiles / nTilesPerWarp
  int weightFloats;    // the staged weights: weightOperandFloats
  int runTableInts;    // layout.runs, rounded up to 4
  int rowTableInts;    // imagesPerStep * pixelsPerImage, rounded up to 4: the row tables' length
};

// ---------------------------------------------------------------------------------------------
// Device side.

// Rounds to TF32 (10 mantissa bits, ties away from zero). The instruction exists from sm_80 on;
// the builds for older GPUs never run these kernels (their rows need compute 8.0), but compile
// them, so they get the same rounding in integer arithmetic.
__device__ __forceinline__ uint32_t toTf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t bits;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(bits) : "f"(x));
  return bits;
#else
  const uint32_t bits = __float_as_uint(x);
  return isfinite(x) ? (bits + 0x1000u) & ~0x1FFFu : bits;
#endif
}

// c += a * b on one m16n8k8 tile (sm_80+; the rows of these variants require compute 8.0).
__device__ __forceinline__ void mmaTf32(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)c, (void)a, (void)b;
  __trap();
#endif
}

// A 16x8 A fragment from shared memory: lane l names the 16-byte row (l % 8) + 8 * (l / 8 % 2) of
// the tile's taps 4 * (l / 16) .. + 3, and receives (group, tig), (group + 8, tig), (group,
// tig + 4), (group + 8, tig + 4): the m16n8k8 TF32 A fragment (sm_75+).
__device__ __forceinline__ void loadFragmentA(uint32_t (&a)[4], uint32_t sharedAddress) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(sharedAddress));
#else
  (void)a, (void)sharedAddress;
  __trap();
#endif
}

__device__ __forceinline__ void waitForAllCopies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

// Floats of shared memory a B fragment takes per lane: TF32 keeps the rounded pair, 3xTF32 the
// pair's TF32 parts and the TF32 roundings of the rest (big0, big1, small0, small1).
template <Precision P>
constexpr int kFragmentFloats = P == Precision::kTf32 ? 2 : 4;

// The weights in shared memory as the path's tensor cores take them (weightOperandOffset in
// mma_staging.h), rounded to TF32 (3xTF32: and the rounding of the rest) once a block. Read in
// order -- coalesced, kWeightLoadsInFlight loads a thread in flight -- and each scattered to its
// run and tap: a block's first step waits for this, and at small batches (one image a block)
// it was most of the kernel when each lane gathered its fragments' taps one dependent load at a
// time. The weights area was zeroed first: taps weighted 0 and maps past outChannels stay 0, so
// the padded part of the product adds nothing.
constexpr int kWeightLoadsInFlight = 16;

// Reads the weights [outChannels][inChannels][kernelHeight][kernelWidth] in order and hands each,
// with its (n, c, kh, kw), to `place`, which stores it where its path wants it.
template <class Place>
__device__ __forceinline__ void forEachWeightInOrder(const float* weights, const ConvShape& shape, Place place) {
  const int kernelArea = shape.kernelHeight * shape.kernelWidth;
  const int taps = shape.inChannels * kernelArea;
  const int count = shape.outChannels * taps;
  for (int first = threadIdx.x; first < count; first += kWeightLoadsInFlight * blockDim.x) {
    float value[kWeightLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kWeightLoadsInFlight; ++u) {
      const int e = first + u * static_cast<int>(blockDim.x);
      value[u] = e < count ? __ldg(weights + e) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kWeightLoadsInFlight; ++u) {
      const int e = first + u * static_cast<int>(blockDim.x);
      if (e >= count) break;
      const int n = e / taps;
      const int tap = e - n * taps;
      const int c = tap / kernelArea;
      const int kh = (tap - c * kernelArea) / shape.kernelWidth;
      place(n, c, kh, tap - c * kernelArea - kh * shape.kernelWidth, value[u]);
    }
  }
}

template <Precision P, MmaPath Path>
__device__ __forceinline__ void stageWeightOperands(const MmaConvArgs& a, float* shared) {
  constexpr bool kSplit = P == Precision::kTf32x3;
  forEachWeightInOrder(a.weights, a.shape, [&](int n, int c, int kh, int kw, float value) {
    const RunTap at = runTapOfWeight(a.layout, c, kh, kw);
    const uint32_t big = toTf32(value);
    shared[weightOperandOffset(Path, a.nTiles, a.kSteps, kSplit, at.run, at.tap, n, 0)] = __uint_as_float(big);
    if constexpr (kSplit)
      shared[weightOperandOffset(Path, a.nTiles, a.kSteps, kSplit, at.run, at.tap, n, 1)] =
          __uint_as_float(toTf32(value - __uint_as_float(big)));
  });
}

// Each run's offset from a window's origin, in bytes (added to the lanes' shared addresses).
__device__ __forceinline__ void stageRunTable(const MmaConvArgs& a, int* shared) {
  for (int q = threadIdx.x; q < a.runTableInts; q += blockDim.x)
    shared[q] = q < a.layout.runs ? runOffset(a.layout, q) * static_cast<int>(sizeof(float)) : 0;
}

// Where each product row of a step lies, the same for every step: its window's staged offset,
// and its output element relative to the step's first image (map 0). Made once a block, so the
// warps never divide to find a row.
__device__ __forceinline__ void stageRowTables(const MmaConvArgs& a, int* staged, int* output) {
  const int stepRows = a.imagesPerStep * a.pixelsPerImage;
  const bool pooled = a.epilogue.pooling != FusedPooling::kNone;
  const int outPlane = pooled ? a.pooledHeight * a.pooledWidth : a.shape.outHeight * a.shape.outWidth;
  for (int m = threadIdx.x; m < stepRows; m += blockDim.x) {
    const ProductRow r = productRow(m, a.pixelsPerImage, pooled, a.pooledWidth, a.shape.outWidth);
    staged[m] = stagedOffset(a.layout, windowOrigin(a.layout, r.image, r.oh, r.ow));
    output[m] = r.image * a.shape.outChannels * outPlane + r.pixel;
  }
}

// Issues the copies of step `step`'s images (imagesPerStep of imageFloats each), as they lie in
// memory, into `raw`: 16-byte pieces when `vectorCopy` (16-byte aligned images of whole float4s).
// Images past the batch are not loaded: their rows are computed from what shared memory holds and
// not stored.
__device__ __forceinline__ void copyImagesAsync(const float* input, int batch, int imagesPerStep, int imageFloats,
                                                bool vectorCopy, int step, float* raw) {
  const int first = step * imagesPerStep;
  const int floats = min(imagesPerStep, batch - first) * imageFloats;
  const float* source = input + static_cast<int64_t>(first) * imageFloats;
  if (vectorCopy) {
    for (int i = 4 * threadIdx.x; i < floats; i += 4 * blockDim.x) direct_conv::copyAsync16(raw + i, source + i);
  } else {
    for (int i = threadIdx.x; i < floats; i += blockDim.x) direct_conv::copyAsync4(raw + i, source + i);
  }
}

__device__ __forceinline__ void copyStepImages(const MmaConvArgs& a, int step, float* raw) {
  copyImagesAsync(a.input, a.shape.batch, a.imagesPerStep, a.imageFloats, a.vectorCopy, step, raw);
}

// Moves the step's images from `raw` into the layout, rounded to TF32 for the TF32 product (3xTF32
// splits them where it reads them). A warp takes an input row, its lanes the columns: channels
// last, four channels of a pixel go as one 16-byte store; shifted, each value goes to its four
// copies. The halo and the zero columns are never written; padded channels are written as zeros.
template <Precision P>
__device__ __forceinline__ void arrangeStepImages(const MmaConvArgs& a, int step, const float* raw, float* staged) {
  const StagedLayout& l = a.layout;
  const int count = min(a.imagesPerStep, a.shape.batch - step * a.imagesPerStep);
  const int warps = blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  const int plane = l.height * l.width;
  const auto rounded = [](float x) { return P == Precision::kTf32 ? __uint_as_float(toTf32(x)) : x; };
  // A warp takes every warps-th input row: its image, channel and row are counted on, not divided
  // out (a division is some 25 instructions, and the first layer has 48 rows an image).
  const int channels = l.mode == StagingMode::kChannelsLast ? 1 : l.channels;  // a channel's rows apart
  int image = 0, c = 0, y = threadIdx.x / 32;
  const auto carry = [&] {
    while (y >= l.height) {
      y -= l.height;
      if (++c == channels) c = 0, ++image;
    }
  };
  carry();
  if (l.mode == StagingMode::kChannelsLast) {
    for (; image < count; y += warps, carry()) {
      const float* source = raw + image * a.imageFloats + y * l.width;
      for (int x = lane; x < l.width; x += 32)
        for (int c0 = 0; c0 < l.channelsPadded; c0 += kRunTaps) {
          float4 v;
          v.x = c0 < l.channels ? rounded(source[c0 * plane + x]) : 0.0f;
          v.y = c0 + 1 < l.channels ? rounded(source[(c0 + 1) * plane + x]) : 0.0f;
          v.z = c0 + 2 < l.channels ? rounded(source[(c0 + 2) * plane + x]) : 0.0f;
          v.w = c0 + 3 < l.channels ? rounded(source[(c0 + 3) * plane + x]) : 0.0f;
          *reinterpret_cast<float4*>(staged + stagedInputOffset(l, image, c0, y, x)) = v;
        }
    }
    return;
  }
  for (; image < count; y += warps, carry()) {
    const float* source = raw + ((image * l.channels + c) * l.height + y) * l.width;  // rows follow one another
    for (int x = lane; x < l.width; x += 32) {
      const float v = rounded(source[x]);
      const int origin = stagedInputOffset(l, image, c, y, x);
#pragma unroll
      for (int s = 0; s < kShiftedCopies; ++s)
        if (origin >= s) staged[s * l.copyStride + origin - s] = v;
    }
  }
}

// One k-step's fragments of a warp tile: A for each m-tile (one ldmatrix each), B for each
// n-tile (one 8- or 16-byte load each).
template <Precision P, int MTiles, int NTiles>
struct StepFragments {
  uint32_t a[MTiles][4];
  uint32_t bBig[NTiles][2];
  uint32_t bSmall[P == Precision::kTf32x3 ? NTiles : 1][2];
};

// The A fragments of k-step ks: one ldmatrix an m-tile.
template <int MTiles>
__device__ __forceinline__ void loadStepA(const int* runs, const uint32_t (&laneRow)[MTiles], int ks,
                                          uint32_t (&fragments)[MTiles][4]) {
  const uint32_t run = static_cast<uint32_t>(runs[2 * ks + threadIdx.x % 32 / 16]);
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt) loadFragmentA(fragments[mt], laneRow[mt] + run);
}

template <Precision P, MmaPath Path, int MTiles, int NTiles>
__device__ __forceinline__ void loadStep(const MmaConvArgs& a, const float* weights, const int* runs,
                                         const uint32_t (&laneRow)[MTiles], int ks, int nt0,
                                         StepFragments<P, MTiles, NTiles>& f) {
  const int lane = threadIdx.x % 32;
  loadStepA(runs, laneRow, ks, f.a);
  if constexpr (Path == MmaPath::kWarpgroup) {
    // The warpgroup kernels compiled without wgmma (a build for sm_90 without sm_90a): the lane's
    // B fragment from the core matrices, two 4-byte loads a part.
    const int rest = weightOperandFloats(a.nTiles, a.kSteps, false);
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt) {
      const float* b = weights + (ks * a.nTiles + nt0 + nt) * 64 + lane;
      f.bBig[nt][0] = __float_as_uint(b[0]);
      f.bBig[nt][1] = __float_as_uint(b[32]);
      if constexpr (P == Precision::kTf32x3) {
        f.bSmall[nt][0] = __float_as_uint(b[rest]);
        f.bSmall[nt][1] = __float_as_uint(b[rest + 32]);
      }
    }
    return;
  }
#pragma unroll
  for (int nt = 0; nt < NTiles; ++nt) {
    const float* fragment = weights + ((ks * a.nTiles + nt0 + nt) * 32 + lane) * kFragmentFloats<P>;
    if constexpr (P == Precision::kTf32) {
      const float2 pair = *reinterpret_cast<const float2*>(fragment);
      f.bBig[nt][0] = __float_as_uint(pair.x);
      f.bBig[nt][1] = __float_as_uint(pair.y);
    } else {
      const float4 parts = *reinterpret_cast<const float4*>(fragment);
      f.bBig[nt][0] = __float_as_uint(parts.x);
      f.bBig[nt][1] = __float_as_uint(parts.y);
      f.bSmall[nt][0] = __float_as_uint(parts.z);
      f.bSmall[nt][1] = __float_as_uint(parts.w);
    }
  }
}

// An A fragment as the product takes it: TF32 as staged (rounded when the step was arranged);
// 3xTF32 splits each value into its TF32 rounding and the TF32 rounding of the rest.
template <Precision P>
__device__ __forceinline__ void splitFragment(const uint32_t (&a)[4], uint32_t (&big)[4], uint32_t (&small)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (P == Precision::kTf32) {
      big[i] = a[i];
    } else {
      big[i] = toTf32(__uint_as_float(a[i]));
      small[i] = toTf32(__uint_as_float(a[i]) - __uint_as_float(big[i]));
    }
  }
}

template <Precision P, int MTiles, int NTiles>
__device__ __forceinline__ void multiplyStep(const StepFragments<P, MTiles, NTiles>& f,
                                             float (&acc)[MTiles][NTiles][4]) {
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt) {
    uint32_t aBig[4], aSmall[4];
    splitFragment<P>(f.a[mt], aBig, aSmall);
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt) {
      if constexpr (P == Precision::kTf32x3) {
        mmaTf32(acc[mt][nt], aBig, f.bSmall[nt]);  // the small terms first, while acc is small
        mmaTf32(acc[mt][nt], aSmall, f.bBig[nt]);
      }
      mmaTf32(acc[mt][nt], aBig, f.bBig[nt]);
    }
  }
}

// Where the output of product row m goes: element (image, map 0, pixel) of the output, or -1
// when the row is past the step or its image past the batch.
__device__ __forceinline__ int64_t outputBase(const MmaConvArgs& a, const int* rowOutput, int m, int stepRows, int step,
                                              int outPlane) {
  if (m >= stepRows) return -1;
  const int64_t firstImage = int64_t{step} * a.imagesPerStep;
  const int64_t imageElements = int64_t{a.shape.outChannels} * outPlane;
  if (rowOutput[m] >= (a.shape.batch - firstImage) * imageElements) return -1;  // past the batch
  return firstImage * imageElements + rowOutput[m];
}

// The epilogue of a warp tile, for one pooling and one activation known at compile time (so the
// compiler never computes every activation and selects); the TF32 kernels take tanh's hardware
// approximation (ApproximateTanh: epilogue.cuh). Accumulator i of a tile is row
// group + 8 * (i / 2), map 2 * tig + i % 2; the pair p = 2 * mt + h names the row
// group + 16 * mt + 8 * h.
template <int MTiles, int NTiles, FusedPooling Pooling, FusedActivation Activation, bool ApproximateTanh>
__device__ __forceinline__ void storeTile(const MmaConvArgs& a, const float (&acc)[MTiles][NTiles][4],
                                          const int* rowOutput, int stepRows, int step, int m0, int nt0) {
  const int lane = threadIdx.x % 32;
  const int group = lane / 4;  // the accumulator's row
  const int tig = lane % 4;    // the accumulator's column pair
  const int maps = a.shape.outChannels;
  const FusedEpilogue& epilogue = a.epilogue;
  if constexpr (Pooling == FusedPooling::kNone) {
    const int outPlane = a.shape.outHeight * a.shape.outWidth;
#pragma unroll
    for (int p = 0; p < 2 * MTiles; ++p) {
      const int64_t base = outputBase(a, rowOutput, m0 + 16 * (p / 2) + group + 8 * (p % 2), stepRows, step, outPlane);
#pragma unroll
      for (int nt = 0; nt < NTiles; ++nt) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int map = 8 * (nt0 + nt) + 2 * tig + j;
          if (base < 0 || map >= maps) continue;
          const float value = acc[p / 2][nt][2 * (p % 2) + j] + (epilogue.bias ? epilogue.bias[map] : 0.0f);
          a.output[base + int64_t{map} * outPlane] = activateAs<Activation, ApproximateTanh>(value);
        }
      }
    }
  } else {
    // Pooled: a window's four rows are lanes 4 and 8 apart (group bits 0 and 1), and lane r of the
    // window (group % 4) finishes the row pairs p = r, r + 4, ... (one set of four pairs per two
    // m-tiles): one activation per pooled output. Two halving exchanges get it there: with its
    // partner 4 lanes away a lane swaps the half of its values that the partner keeps (pairs
    // differing in bit 0), then with the one 8 away the half of those (bit 1), so each shuffle
    // carries a value someone needs: 3 shuffles a set of four pairs, not 8.
    // Max pooling comes before the bias and a nondecreasing activation: with rounding, which is
    // monotonic too, the maximum of f(x + b) is f(max(x) + b). Average pooling, and max pooling
    // after an activation that dips (HardSwish), need them first.
    const int outPlane = a.pooledHeight * a.pooledWidth;
    const int r = group % kWindowPixels;
    constexpr int kSets = 2 * MTiles / kWindowPixels;
    int64_t base[kSets];
#pragma unroll
    for (int set = 0; set < kSets; ++set) {
      const int p = kWindowPixels * set + r;
      base[set] = outputBase(a, rowOutput, m0 + 16 * (p / 2) + (group - r) + 8 * (p % 2), stepRows, step, outPlane);
    }
    constexpr bool maxPool = Pooling == FusedPooling::kMax;
    constexpr bool activateFirst = !maxPool || !maxPoolCommutesWith(Activation);
    const auto combine = [](float x, float y) { return maxPool ? fmaxf(x, y) : x + y; };
    const bool bit0 = r & 1, bit1 = r & 2;
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt) {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int map = 8 * (nt0 + nt) + 2 * tig + j;
        const float bias = epilogue.bias && map < maps ? epilogue.bias[map] : 0.0f;
        float v[2 * MTiles];
#pragma unroll
        for (int p = 0; p < 2 * MTiles; ++p) {
          v[p] = acc[p / 2][nt][2 * (p % 2) + j];
          if constexpr (activateFirst) v[p] = activateAs<Activation, ApproximateTanh>(v[p] + bias);
        }
        float half[MTiles];  // pair 2q + bit0, with the partner 4 lanes away
#pragma unroll
        for (int q = 0; q < MTiles; ++q) {
          const float keep = bit0 ? v[2 * q + 1] : v[2 * q];
          const float send = bit0 ? v[2 * q] : v[2 * q + 1];
          half[q] = combine(keep, __shfl_xor_sync(0xffffffffu, send, 4));
        }
#pragma unroll
        for (int set = 0; set < kSets; ++set) {  // pair 4 set + 2 bit1 + bit0 = 4 set + r
          const float keep = bit1 ? half[2 * set + 1] : half[2 * set];
          const float send = bit1 ? half[2 * set] : half[2 * set + 1];
          const float window = combine(keep, __shfl_xor_sync(0xffffffffu, send, 8));
          const float pooled = !maxPool        ? window * (1.0f / kWindowPixels)
                               : activateFirst ? window
                                               : activateAs<Activation, ApproximateTanh>(window + bias);
          if (base[set] < 0 || map >= maps) continue;
          a.output[base[set] + int64_t{map} * outPlane] = pooled;
        }
      }
    }
  }
}

// Calls f(pooling, activation) with the epilogue's pooling and activation as std::integral_constant
// arguments, so that the code f instantiates knows both at compile time.
template <class F>
__device__ __forceinline__ void withFusedEpilogue(const FusedEpilogue& epilogue, F f) {
  const auto withActivation = [&](auto pooling) {
    return withFusedActivation(epilogue.activation, [&](auto activation) { return f(pooling, activation); });
  };
  switch (epilogue.pooling) {
    case FusedPooling::kNone:
      return withActivation(std::integral_constant<FusedPooling, FusedPooling::kNone>{});
    case FusedPooling::kMax:
      return withActivation(std::integral_constant<FusedPooling, FusedPooling::kMax>{});
    case FusedPooling::kAverage:
      return withActivation(std::integral_constant<FusedPooling, FusedPooling::kAverage>{});
  }
}

// storeTile for the epilogue the plan fused.
template <int MTiles, int NTiles, bool ApproximateTanh>
__device__ __forceinline__ void storeWarpTile(const MmaConvArgs& a, const float (&acc)[MTiles][NTiles][4],
                                              const int* rowOutput, int stepRows, int step, int m0, int nt0) {
  withFusedEpilogue(a.epilogue, [&](auto pooling, auto activation) {
    storeTile<MTiles, NTiles, decltype(pooling)::value, decltype(activation)::value, ApproximateTanh>(
        a, acc, rowOutput, stepRows, step, m0, nt0);
  });
}

// The row each lane names to ldmatrix in each of its warp's m-tiles (rows m0 ..); rows past the
// step name row 0's window (finite, unused). Read once through a volatile pointer: near its
// register limit the compiler would otherwise re-read the table in every k-step.
template <int MTiles>
__device__ __forceinline__ void laneRows(uint32_t stagedBase, const int* rowStaged, int stepRows, int m0,
                                         uint32_t (&laneRow)[MTiles]) {
  const int lane = threadIdx.x % 32;
  const volatile int* stagedTable = rowStaged;
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt) {
    const int m = m0 + 16 * mt + lane % 8 + 8 * (lane / 8 % 2);
    laneRow[mt] = stagedBase + static_cast<uint32_t>((m < stepRows ? stagedTable[m] : 0) * sizeof(float));
  }
}

template <int MTiles, int NTiles>
__device__ __forceinline__ void zeroAccumulators(float (&acc)[MTiles][NTiles][4]) {
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0f;
}

// One warp's tile: MTiles x 16 product rows, starting at step row m0, by NTiles x 8 maps starting
// at map tile nt0, on mma.sync. `stagedBase` is the shared address of the step's arranged images.
template <Precision P, MmaPath Path, int MTiles, int NTiles>
__device__ __forceinline__ void computeWarpTile(const MmaConvArgs& a, uint32_t stagedBase, const float* weights,
                                                const int* runs, const int* rowStaged, const int* rowOutput,
                                                int stepRows, int step, int m0, int nt0) {
  static_assert(MTiles % 2 == 0, "the pooled epilogue hands a lane one window of every four row pairs");
  uint32_t laneRow[MTiles];
  laneRows(stagedBase, rowStaged, stepRows, m0, laneRow);
  float acc[MTiles][NTiles][4];
  zeroAccumulators(acc);

  // Two sets of fragments: the next k-step's loads are in flight while this one's mma run.
  StepFragments<P, MTiles, NTiles> even, odd;
  loadStep<P, Path>(a, weights, runs, laneRow, 0, nt0, even);
  for (int ks = 0; ks < a.kSteps; ks += 2) {
    if (ks + 1 < a.kSteps) loadStep<P, Path>(a, weights, runs, laneRow, ks + 1, nt0, odd);
    multiplyStep(even, acc);
    if (ks + 1 == a.kSteps) break;
    if (ks + 2 < a.kSteps) loadStep<P, Path>(a, weights, runs, laneRow, ks + 2, nt0, even);
    multiplyStep(odd, acc);
  }

  storeWarpTile<MTiles, NTiles, P == Precision::kTf32>(a, acc, rowOutput, stepRows, step, m0, nt0);
}

// ---------------------------------------------------------------------------------------------
// wgmma (sm_90a): a warpgroup -- four consecutive warps -- multiplies 64 rows at a time, A from
// its warps' registers (each warp its 16 rows, the same fragment ldmatrix gives mma.sync) and B
// straight from the core matrices in shared memory through a descriptor, asynchronously: the
// warps load the next k-step's A while the tensor cores work. Only the sm_90a compilation has it;
// the warpgroup kernels compiled for any other target run the mma.sync loop on the same layout.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONVSCOPE_HAS_WGMMA 1
#else
#define CONVSCOPE_HAS_WGMMA 0
#endif

#if CONVSCOPE_HAS_WGMMA
// d += a * b over one k-step for 64 rows x 8 NTiles maps; this warp holds its 16 rows of d and a.
// One spelling per shape: an asm statement's operand list is fixed, and each shape has its own.
template <int NTiles>
__device__ __forceinline__ void warpgroupMma(float (&d)[NTiles][4], const uint32_t (&a)[4], uint64_t b) {
  if constexpr (NTiles == 1)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
  if constexpr (NTiles == 2)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, "
        "1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),
          "+f"(d[1][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
  if constexpr (NTiles == 3)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n24k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, %16, p, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),
          "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
  if constexpr (NTiles == 4)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, "
        "{%16,%17,%18,%19}, %20, p, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),
          "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]),
          "+f"(d[3][2]), "+f"(d[3][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

__device__ __forceinline__ void warpgroupFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void warpgroupCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void warpgroupWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// Keeps the compiler from moving reads or writes of the accumulators across the asynchronous
// products that own them until the last wait.
template <int MTiles, int NTiles>
__device__ __forceinline__ void pinAccumulators(float (&acc)[MTiles][NTiles][4]) {
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) asm volatile("" : "+f"(acc[mt][nt][i])::"memory");
}

// Issues one k-step's products for every m-tile as one group. `weights`: the shared address of
// the k-step's first core matrix of this tile's n-tiles; `restBytes`: how far 3xTF32's rests lie
// after the values.
template <Precision P, int MTiles, int NTiles>
__device__ __forceinline__ void issueWarpgroupStep(float (&acc)[MTiles][NTiles][4], const uint32_t (&a)[MTiles][4],
                                                   uint32_t weights, uint32_t restBytes) {
  // 3xTF32's split parts are written before the fence, as every register a wgmma reads must be.
  uint32_t aBig[MTiles][4], aSmall[MTiles][4];
  if constexpr (P == Precision::kTf32x3) {
#pragma unroll
    for (int mt = 0; mt < MTiles; ++mt) splitFragment<P>(a[mt], aBig[mt], aSmall[mt]);
  }
  warpgroupFence();  // the A registers were written by ldmatrix (and the split)
  const uint64_t big = coreMatrixDescriptor(weights);
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt) {
    if constexpr (P == Precision::kTf32) {
      warpgroupMma(acc[mt], a[mt], big);
    } else {
      warpgroupMma(acc[mt], aBig[mt], coreMatrixDescriptor(weights + restBytes));  // small terms first
      warpgroupMma(acc[mt], aSmall[mt], big);
      warpgroupMma(acc[mt], aBig[mt], big);
    }
  }
  warpgroupCommit();
}
#endif

// This warp's part of a warpgroup tile: its MTiles x 16 rows from m0 (the warpgroup's four warps
// take consecutive row blocks) by NTiles x 8 maps from map tile nt0. All four warps call it
// together: wgmma is issued by the whole warpgroup.
template <Precision P, int MTiles, int NTiles>
__device__ __forceinline__ void computeWarpgroupTile(const MmaConvArgs& a, uint32_t stagedBase, const float* weights,
                                                     const int* runs, const int* rowStaged, const int* rowOutput,
                                                     int stepRows, int step, int m0, int nt0) {
#if CONVSCOPE_HAS_WGMMA
  static_assert(MTiles % 2 == 0, "the pooled epilogue hands a lane one window of every four row pairs");
  uint32_t laneRow[MTiles];
  laneRows(stagedBase, rowStaged, stepRows, m0, laneRow);
  float acc[MTiles][NTiles][4];
  zeroAccumulators(acc);

  const uint32_t tileWeights =
      static_cast<uint32_t>(__cvta_generic_to_shared(weights)) + static_cast<uint32_t>(nt0 * 64 * sizeof(float));
  const uint32_t stepBytes = static_cast<uint32_t>(a.nTiles * 64 * sizeof(float));
  const uint32_t restBytes = static_cast<uint32_t>(a.kSteps) * stepBytes;
  // Two sets of A fragments: a step's ldmatrix writes one set while the other's products run.
  // Before it overwrites a set, a warp waits until only the latest group is in flight.
  uint32_t even[MTiles][4], odd[MTiles][4];
  loadStepA(runs, laneRow, 0, even);
  pinAccumulators(acc);
  for (int ks = 0; ks < a.kSteps; ks += 2) {
    issueWarpgroupStep<P>(acc, even, tileWeights + ks * stepBytes, restBytes);
    if (ks + 1 == a.kSteps) break;
    warpgroupWait<1>();  // step ks - 1, which read `odd`, is done
    loadStepA(runs, laneRow, ks + 1, odd);
    issueWarpgroupStep<P>(acc, odd, tileWeights + (ks + 1) * stepBytes, restBytes);
    if (ks + 2 == a.kSteps) break;
    warpgroupWait<1>();  // step ks, which read `even`, is done
    loadStepA(runs, laneRow, ks + 2, even);
  }
  warpgroupWait<0>();
  pinAccumulators(acc);
  storeWarpTile<MTiles, NTiles, P == Precision::kTf32>(a, acc, rowOutput, stepRows, step, m0, nt0);
#else
  computeWarpTile<P, MmaPath::kWarpgroup, MTiles, NTiles>(a, stagedBase, weights, runs, rowStaged, rowOutput, stepRows,
                                                          step, m0, nt0);
#endif
}

template <Precision P, MmaPath Path, int MTiles, int NTiles>
__device__ __forceinline__ void runImplicitGemm(const MmaConvArgs& a) {
  extern __shared__ float4 sharedStorage[];
  float* const weights = reinterpret_cast<float*>(sharedStorage);
  int* const runs = reinterpret_cast<int*>(weights + a.weightFloats);
  int* const rowStaged = runs + a.runTableInts;
  int* const rowOutput = rowStaged + a.rowTableInts;
  float* const raw = reinterpret_cast<float*>(rowOutput + a.rowTableInts);
  float* const staged = raw + a.rawFloats;
  const uint32_t stagedBase = static_cast<uint32_t>(__cvta_generic_to_shared(staged));

  // Zero the weights (their padding stays zero), the raw images and the layout once: the halo,
  // the padded channels and the zero columns stay zero (the arranging pass writes only the
  // images), and so do a first partial step's slots past the batch.
  for (int i = threadIdx.x; i < a.weightFloats; i += blockDim.x) weights[i] = 0.0f;
  for (int i = threadIdx.x; i < a.rawFloats + a.stagedFloats; i += blockDim.x) raw[i] = 0.0f;
  __syncthreads();
  stageWeightOperands<P, Path>(a, weights);
  stageRunTable(a, runs);
  stageRowTables(a, rowStaged, rowOutput);
#if CONVSCOPE_HAS_WGMMA
  // The tensor cores read the weights through the async proxy: order the stores above before it.
  if constexpr (Path == MmaPath::kWarpgroup) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  __syncthreads();

  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const int stepRows = a.imagesPerStep * a.pixelsPerImage;
  // A task: MTiles x 16 rows for one warp (mma.sync), or four warps' worth for a warpgroup.
  constexpr int kWarpsPerTask = Path == MmaPath::kWarpgroup ? 4 : 1;
  const int rowsPerTask = kWarpsPerTask * 16 * MTiles;
  const int rowTasks = (stepRows + rowsPerTask - 1) / rowsPerTask;
  const int team = warp / kWarpsPerTask;  // the plan makes blockDim a multiple of 128
  const int teams = warps / kWarpsPerTask;

  // One raw buffer and one layout: the next step's copy runs while this step is computed.
  int step = blockIdx.x;
  if (step < a.numSteps) copyStepImages(a, step, raw);
  direct_conv::commitCopies();
  for (; step < a.numSteps; step += gridDim.x) {
    waitForAllCopies();
    __syncthreads();  // the step's raw images are in; everyone is done with the last layout
    arrangeStepImages<P>(a, step, raw, staged);
    __syncthreads();  // the layout is complete; `raw` is free for the next step
    if (step + static_cast<int>(gridDim.x) < a.numSteps) copyStepImages(a, step + gridDim.x, raw);
    direct_conv::commitCopies();
    // The last step's rows of images past the batch are computed from stale values and not stored.
    // A team takes every teams-th task, counted on as (chunk, row task) without dividing.
    int chunk = 0, rowTask = team;
    const auto carry = [&] {
      for (; rowTask >= rowTasks; rowTask -= rowTasks) ++chunk;
    };
    for (carry(); chunk < a.nChunks; rowTask += teams, carry()) {
      const int m0 = rowTask * rowsPerTask + (warp % kWarpsPerTask) * 16 * MTiles;
      if constexpr (Path == MmaPath::kWarpgroup)
        computeWarpgroupTile<P, MTiles, NTiles>(a, stagedBase, weights, runs, rowStaged, rowOutput, stepRows, step, m0,
                                                chunk * NTiles);
      else
        computeWarpTile<P, Path, MTiles, NTiles>(a, stagedBase, weights, runs, rowStaged, rowOutput, stepRows, step, m0,
                                                 chunk * NTiles);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.

// The epilogue the plan gave the kernel, as the kernel takes it. Throws for a pooling the row's
// fusesStep declines (the plan never hands it one): both read the one rule, isWholeTwoByTwoPool.
inline void setEpilogue(MmaConvArgs& a, const ConvProblem& p, const ConvEpilogue& e) {
  a.epilogue = fusedEpilogueOf(e);
  a.pooledHeight = p.outHeight();
  a.pooledWidth = p.outWidth();
  if (!e.hasPool) return;
  if (!isWholeTwoByTwoPool(p, e.pool))
    throw Error(
        "internal: the tensor-core kernels fuse only 2x2 poolings of stride 2 without padding, inside a conv "
        "output of at least 2x2");
  a.pooledHeight = e.pool.outHeight;
  a.pooledWidth = e.pool.outWidth;
}

// Whether the kernel fuses `step` after a conv of `p`: any activation; a pooling of the one shape
// the kernel pools (isWholeTwoByTwoPool).
inline bool fusesStep(const ConvProblem& p, const EpilogueStep& step) {
  return !step.isPool || isWholeTwoByTwoPool(p, step.pool);
}

struct MmaConvPlan {
  bool fits = false;
  MmaConvArgs args{};
  int threads = 0;
  size_t sharedBytes = 0;
};

// The tensor-core path a kernel takes: mma.sync, on every GPU from sm_80. The wgmma path
// (CONVSCOPE_TENSOR_MMA=wgmma, read once; taken on compute capability 9.0 only, in builds with
// sm_90a machine code, which runs nowhere else)
// was measured slower on the course's layers (docs/performance.md, "The Hopper route"): with 12
// and 24 maps, a wgmma is 64 rows x 24 maps at most, and the loads of A, which both paths share,
// bound it. It stays for layers and GPUs where it may win, and for measuring it again.
inline MmaPath mmaPathFor(bool haveGpu, int computeMajor, int computeMinor) {
#if defined(CONVSCOPE_HAVE_SM90A)
  static const bool wgmmaChosen = [] {
    const char* chosen = std::getenv("CONVSCOPE_TENSOR_MMA");
    return chosen && std::string(chosen) == "wgmma";
  }();
  const bool hopper = !haveGpu || (computeMajor == 9 && computeMinor == 0);
  return wgmmaChosen && hopper ? MmaPath::kWarpgroup : MmaPath::kSync;
#else
  (void)haveGpu, (void)computeMajor, (void)computeMinor;
  return MmaPath::kSync;  // no sm_90a machine code in this build
#endif
}

inline MmaPath mmaPathOfThisMachine() {
  const GpuInfo& gpu = gpuInfo();
  return mmaPathFor(gpu.usable, gpu.computeMajor, gpu.computeMinor);
}

// The kernels of one tensor-core variant: per path, one kernel per n-tiles a warp computes (1 to
// 4: 8 to 32 maps), and the m-tiles each warp computes.
template <class Kernel>
struct MmaKernels {
  Kernel sync[kMaxNTilesPerWarp];
  int syncMTiles;
  Kernel warpgroup[kMaxNTilesPerWarp];
  int warpgroupMTiles;

  int mTiles(MmaPath path) const { return path == MmaPath::kSync ? syncMTiles : warpgroupMTiles; }
};

// Lays out shared memory and chooses the images per step: as many warps busy on useful rows as
// possible (a block is always kMaxWarps warps, one block a multiprocessor: the idle ones help stage
// the weights), counting a task's rows past the step as idle. `pooled`: the product rows are the
// pooling windows' pixels. A task is MTiles x 16 rows of one warp (mma.sync) or of each of the four
// warps of a warpgroup (wgmma).
inline MmaConvPlan planImplicitGemm(const ConvProblem& p, const float* input, bool pooled, Precision precision,
                                    MmaPath path, int mTiles, size_t sharedLimit, int multiprocessors) {
  MmaConvPlan plan;
  MmaConvArgs& a = plan.args;
  a.shape = shapeOf(p);
  if (a.shape.outHeight <= 0 || a.shape.outWidth <= 0 || p.batch <= 0) return plan;
  // Channels padded to 4 and three zero columns a row at most double an image: still an int.
  const int64_t paddedPlane =
      (int64_t{p.inHeight} + p.padTop + p.padBottom) * (int64_t{p.inWidth} + p.padLeft + p.padRight + 32);
  if ((int64_t{p.inChannels} + kRunTaps) * paddedPlane > direct_conv::kMaxPlannedElements ||
      p.weightElements() > direct_conv::kMaxPlannedElements)
    return plan;

  a.pooledHeight = pooled ? a.shape.outHeight / 2 : a.shape.outHeight;
  a.pooledWidth = pooled ? a.shape.outWidth / 2 : a.shape.outWidth;
  a.pixelsPerImage = pooled ? kWindowPixels * a.pooledHeight * a.pooledWidth : a.shape.outHeight * a.shape.outWidth;
  if (a.pixelsPerImage <= 0) return plan;
  // A row's output offset within a step (images x maps x plane) is an int.
  const auto offsetsFit = [&](int images) {
    return int64_t{images} * p.outChannels * a.pixelsPerImage < (int64_t{1} << 31);
  };
  if (!offsetsFit(1)) return plan;

  // The padding of the rows (and the copies' stride) that spreads the ldmatrix rows of one image
  // best over the banks; the least padding among equals.
  int rowPad = 0, copyResidue = 0, fewest = -1;
  const bool shifted = stagingModeFor(p.inChannels, p.kernelWidth) == StagingMode::kShiftedCopies;
  const int sampleRows = std::min(a.pixelsPerImage, 1024);
  for (int pad = 0; pad < 32; pad += kRunTaps)
    for (int residue = 0; residue < (shifted ? 32 : 1); residue += kRunTaps) {
      const int conflicts = ldmatrixBankConflicts(stagedLayoutFor(p, 1, pad, residue), sampleRows, a.pixelsPerImage,
                                                  pooled, a.pooledWidth, a.shape.outWidth);
      if (fewest < 0 || conflicts < fewest) fewest = conflicts, rowPad = pad, copyResidue = residue;
    }

  a.layout = stagedLayoutFor(p, 1, rowPad, copyResidue);
  a.kSteps = a.layout.runs / 2;
  a.nTilesPerWarp = std::min((p.outChannels + 7) / 8, kMaxNTilesPerWarp);
  a.nTiles = roundUp((p.outChannels + 7) / 8, a.nTilesPerWarp);
  a.nChunks = a.nTiles / a.nTilesPerWarp;
  a.weightFloats = weightOperandFloats(a.nTiles, a.kSteps, precision == Precision::kTf32x3);
  a.runTableInts = roundUp(a.layout.runs, 4);
  a.imageFloats = p.inChannels * p.inHeight * p.inWidth;
  a.vectorCopy = a.imageFloats % 4 == 0 && reinterpret_cast<uintptr_t>(input) % 16 == 0;
  // Counted in 4-byte words: the run and row tables are ints, laid out between the floats.
  static_assert(sizeof(int) == sizeof(float), "the shared-memory layout counts ints and floats alike");
  auto sharedBytes = [&](int images) {
    const StagedLayout l = stagedLayoutFor(p, images, rowPad, copyResidue);
    return (static_cast<size_t>(a.weightFloats) + a.runTableInts +
            2 * static_cast<size_t>(roundUp(images * a.pixelsPerImage, 4)) +
            static_cast<size_t>(roundUp(images * a.imageFloats, 4)) + static_cast<size_t>(stagedFloats(l, images))) *
           sizeof(float);
  };
  if (sharedBytes(1) > sharedLimit) return plan;

  const int busyImages = std::max(1, (p.batch + multiprocessors - 1) / multiprocessors);
  const int warpsPerTask = path == MmaPath::kWarpgroup ? 4 : 1;
  const int rowsPerTask = warpsPerTask * 16 * mTiles;
  const int teams = kMaxWarps / warpsPerTask;
  auto usefulWarps = [&](int images) {
    const int64_t rows = int64_t{images} * a.pixelsPerImage;
    const int64_t tasks = (rows + rowsPerTask - 1) / rowsPerTask * a.nChunks;
    const int64_t rounds = (tasks + teams - 1) / teams;
    return double(rows * a.nChunks) / double(rounds * rowsPerTask) * warpsPerTask;  // on useful rows, on average
  };
  int images = 1;
  double best = usefulWarps(1);
  for (int more = 2; more <= busyImages && sharedBytes(more) <= sharedLimit && offsetsFit(more); ++more) {
    const double score = usefulWarps(more);
    if (score > best + 1e-9) {
      best = score;
      images = more;
    }
    if (int64_t{more} * a.pixelsPerImage >= int64_t{kMaxWarps} * 16 * mTiles * 4) break;  // enough rounds
  }
  a.layout = stagedLayoutFor(p, images, rowPad, copyResidue);
  a.imagesPerStep = images;
  a.numSteps = (p.batch + images - 1) / images;
  a.rawFloats = roundUp(images * a.imageFloats, 4);
  a.stagedFloats = stagedFloats(a.layout, images);
  a.rowTableInts = roundUp(images * a.pixelsPerImage, 4);
  plan.threads = 32 * kMaxWarps;
  plan.sharedBytes = sharedBytes(images);
  plan.fits = true;
  return plan;
}

// Why the kernel cannot take `p`, or "".
template <class Kernel>
std::string implicitGemmUnsupportedReason(const ConvProblem& p, Precision precision,
                                          const MmaKernels<Kernel>& kernels) {
  const direct_conv::DirectConvLimits limits = direct_conv::directConvLimits();
  const MmaPath path = mmaPathOfThisMachine();
  if (planImplicitGemm(p, nullptr, false, precision, path, kernels.mTiles(path), limits.sharedOptin,
                       limits.multiprocessors)
          .fits)
    return {};
  return "one image (as it lies in memory and arranged for ldmatrix), the weights and the tables do not fit in the " +
         std::to_string(limits.sharedOptin / 1024) + " KB of shared memory a block can have" +
         (limits.reference ? " (an H100's)" : "");
}

template <class Kernel>
KernelLaunchGeometry implicitGemmGeometry(const ConvProblem& p, const std::string& kernel, Precision precision,
                                          const MmaKernels<Kernel>& kernels) {
  const direct_conv::DirectConvLimits limits = direct_conv::directConvLimits();
  const MmaPath path = mmaPathOfThisMachine();
  const int mTiles = kernels.mTiles(path);
  const MmaConvPlan plan =
      planImplicitGemm(p, nullptr, false, precision, path, mTiles, limits.sharedOptin, limits.multiprocessors);
  const bool warpgroup = path == MmaPath::kWarpgroup;
  KernelLaunchGeometry g;
  g.kernel = kernel;
  g.gridX = plan.args.numSteps;
  g.blockX = plan.threads;
  g.tileHeight = 16 * mTiles;
  g.tileWidth = 1;
  g.sharedBytes = static_cast<int64_t>(plan.sharedBytes);
  const bool channelsLast = plan.args.layout.mode == StagingMode::kChannelsLast;
  g.mapping = "persistent grid: blocks take steps of " + std::to_string(plan.args.imagesPerStep) +
              " image(s), staged in shared memory with all weights and arranged " +
              (channelsLast ? "channels last" : "in four shifted copies") +
              " so that ldmatrix reads each 16 x 8 tile of the im2col matrix in one instruction; each warp "
              "computes " +
              std::to_string(16 * mTiles) +
              " output pixels (in row-major order) x up to 32 maps as an implicit matrix product on tensor "
              "cores (" +
              (warpgroup ? "wgmma m64nNk8, four warps together: 64 pixels x up to 32 maps x 8 taps an instruction, "
                           "the weights read from shared memory by the tensor cores"
                         : "mma m16n8k8: 16 pixels x 8 maps x 8 taps an instruction") +
              "; grid shown: " + std::to_string(plan.args.numSteps) + " steps)";
  return g;
}

// Plans made on this context, by shape: a plan's search of the rows' padding reads the first
// image's rows 8 or 64 times, a millisecond of host time that the op time would count at every
// call (the GPU waits for the launch).
struct MmaPlanCache {
  // Shape (with the bottom and right padding, which ConvShape leaves out but the layout pads),
  // pooled, precision, path, 16-byte aligned input.
  std::map<std::tuple<ConvShape, int, int, bool, int, int, bool>, MmaConvPlan> plans;
};

template <class Kernel>
void launchImplicitGemm(const ConvLaunch& l, const ConvEpilogue& epilogue, const MmaKernels<Kernel>& kernels,
                        Precision precision, const char* name) {
  requireValidLaunch(l, name);
  direct_conv::DirectConvDeviceState& device = direct_conv::deviceState(l.context, name);
  const MmaPath path = mmaPathFor(true, device.computeMajor, device.computeMinor);
  MmaPlanCache& cache = l.context.state<MmaPlanCache>(std::string(name) + " plans");  // name: the device state
  const bool aligned = reinterpret_cast<uintptr_t>(l.input) % 16 == 0;
  const auto key = std::make_tuple(shapeOf(l.problem), l.problem.padBottom, l.problem.padRight, epilogue.hasPool,
                                   static_cast<int>(precision), static_cast<int>(path), aligned);
  auto found = cache.plans.find(key);
  if (found == cache.plans.end())
    found = cache.plans
                .emplace(key, planImplicitGemm(l.problem, l.input, epilogue.hasPool, precision, path,
                                               kernels.mTiles(path), device.sharedOptin, device.multiprocessors))
                .first;
  MmaConvPlan plan = found->second;
  if (!plan.fits) throw Error(std::string(name) + ": " + l.problem.describe() + " does not fit in shared memory");
  setEpilogue(plan.args, l.problem, epilogue);
  plan.args.input = l.input;
  plan.args.weights = l.weights;
  plan.args.output = l.output;
  const Kernel kernel = (path == MmaPath::kWarpgroup ? kernels.warpgroup : kernels.sync)[plan.args.nTilesPerWarp - 1];
  const int blocks = direct_conv::residentBlocks(device, kernel, plan.threads, plan.sharedBytes);
  if (blocks <= 0) throw Error(std::string(name) + ": no block fits on a multiprocessor for " + l.problem.describe());
  const int grid = std::min(plan.args.numSteps, blocks * device.multiprocessors);
  // The trace and the launch count name the path that ran (the wgmma kernels are the same
  // templates with another path argument): a path chosen by CONVSCOPE_TENSOR_MMA is checked, not
  // assumed (tensor_core_paths.h).
  const bool warpgroup = path == MmaPath::kWarpgroup;
  const std::string wgmmaName = warpgroup ? std::string(name) + " (wgmma)" : std::string();
  TracedScope scope(l.context, warpgroup ? wgmmaName.c_str() : name);
  kernel<<<grid, plan.threads, plan.sharedBytes, l.context.stream()>>>(plan.args);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
  countTensorCoreLaunch(warpgroup ? TensorCorePath::kWgmmaRegisterA : TensorCorePath::kMmaSync);
}

}  // namespace convscope::gpu::implicit_gemm
