// The machinery of the tensor-core variants (11_tensor_tf32.cu, 12_tensor_3xtf32.cu): the
// convolution as an implicit matrix product on `mma.sync` (m16n8k8, TF32 inputs, FP32
// accumulation), with the bias, the activation and a 2x2 pooling applied to the accumulators.
//
// The product: rows m are output pixels, columns n output maps, and the reduction k runs over
// (channel, kernel row, kernel column), so A[m][k] is the input under tap k of pixel m -- the
// im2col matrix, never written anywhere -- and B[k][n] = W[n][k] is the weight tensor as it lies
// in memory. A persistent block keeps every weight in shared memory, already in the order of
// the mma's B fragments (one 8-byte load per lane and n-tile), and streams groups of whole images
// through two shared-memory buffers with asynchronous copies, as the direct kernels do
// (direct_conv_tiles.cuh stages them). A lane gathers its A fragment straight from the staged
// image: its pixel's offset plus the tap's offset, both from small tables.
//
// The pooling: when the plan fuses a 2x2, stride-2 pooling, rows are ordered by pooling window
// (image, window row, window column, then the window's four pixels), so the four values of a
// window sit in four consecutive rows of an accumulator tile: lanes 4 apart hold them, and two
// shuffles give the maximum or the mean. Only the pooled output is written; the conv output
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
#include <string>
#include <vector>

#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"
#include "gpu/kernels/direct_conv_tiles.cuh"
#include "gpu/kernels/epilogue.cuh"

namespace convscope::gpu::implicit_gemm {

enum class Precision { kTf32, kTf32x3 };

// Rows of a pooled product per pooling window: the 2x2 window's four pixels.
constexpr int kWindowPixels = 4;
constexpr int kNTilesPerWarp = 4;  // output maps a warp computes at once: 32
constexpr int kMaxWarps = 16;

struct MmaConvArgs {
  direct_conv::DirectConvArgs staging;  // input, shape, images per step and the staged layout
  FusedEpilogue epilogue;               // its pooling, when any: 2x2 windows of stride 2
  float* output;                        // the pooled output when pooled
  int pooledHeight, pooledWidth;
  int pixelsPerImage;  // product rows per image: outHeight * outWidth, or 4 per pooling window
  int reduction;       // K = inChannels * kernelHeight * kernelWidth
  int kSteps;          // ceil(K / 8)
  int nTiles;          // ceil(outChannels / 8)
  int nChunks;         // ceil(nTiles / kNTilesPerWarp)
  int weightFloats;    // kSteps * nTiles * 64: B fragments
  int tapTableInts;    // kSteps * 8: the staged offset of each tap
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

// Where product row m of a step lies in the staged images, and in the output.
struct RowPlace {
  int staged;  // offset of the pixel's first tap in the staging buffer
  int image;   // slot in the step
  int pixel;   // oh * outWidth + ow (unpooled), or the pooling window ph * pooledWidth + pw
};

__device__ __forceinline__ RowPlace placeOf(const MmaConvArgs& a, int m) {
  const direct_conv::DirectConvArgs& s = a.staging;
  RowPlace r;
  r.image = m / a.pixelsPerImage;
  const int q = m - r.image * a.pixelsPerImage;
  int oh, ow;
  if (a.epilogue.pooling != FusedPooling::kNone) {
    const int window = q / kWindowPixels;
    const int d = q % kWindowPixels;
    const int ph = window / a.pooledWidth;
    const int pw = window - ph * a.pooledWidth;
    oh = 2 * ph + d / 2;
    ow = 2 * pw + d % 2;
    r.pixel = window;
  } else {
    oh = q / s.shape.outWidth;
    ow = q - oh * s.shape.outWidth;
    r.pixel = q;
  }
  r.staged = r.image * s.imageStride + oh * s.shape.strideHeight * s.rowPitch + ow * s.shape.strideWidth;
  return r;
}

// Floats of shared memory a B fragment takes per lane: TF32 keeps the rounded pair, 3xTF32 the
// pair's TF32 parts and the TF32 roundings of the rest (big0, big1, small0, small1).
template <Precision P>
constexpr int kFragmentFloats = P == Precision::kTf32 ? 2 : 4;

// B fragments of weights [n][k] in shared memory, split and rounded once: for k-step ks and
// n-tile nt, lane l holds (k = 8ks + l%4, n = 8nt + l/4) and (k + 4, n). Taps past K and maps
// past outChannels are zero, so the padded part of the product adds nothing.
template <Precision P>
__device__ __forceinline__ void stageWeightFragments(const MmaConvArgs& a, float* shared) {
  const int maps = a.staging.shape.outChannels;
  const int pairs = a.weightFloats / kFragmentFloats<P>;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    const int lane = i % 32;
    const int tile = i / 32;  // ks * nTiles + nt
    const int nt = tile % a.nTiles;
    const int ks = tile / a.nTiles;
    const int n = 8 * nt + lane / 4;
    float value[2];
    for (int j = 0; j < 2; ++j) {
      const int k = 8 * ks + lane % 4 + 4 * j;
      value[j] = k < a.reduction && n < maps ? a.staging.weights[static_cast<int64_t>(n) * a.reduction + k] : 0.0f;
    }
    float* out = shared + i * kFragmentFloats<P>;
    for (int j = 0; j < 2; ++j) {
      const uint32_t big = toTf32(value[j]);
      out[j] = __uint_as_float(big);
      if constexpr (P == Precision::kTf32x3) out[2 + j] = __uint_as_float(toTf32(value[j] - __uint_as_float(big)));
    }
  }
}

// The staged offset of tap k = (c, kh, kw): c * planeStride + kh * rowPitch + kw, stored so that
// lane l reads taps (8ks + l%4, 8ks + l%4 + 4) as one int2. Taps past K point at offset 0 and are
// masked where they are read.
__device__ __forceinline__ void stageTapTable(const MmaConvArgs& a, int* shared) {
  const direct_conv::DirectConvArgs& s = a.staging;
  const int area = s.shape.kernelHeight * s.shape.kernelWidth;
  for (int i = threadIdx.x; i < a.tapTableInts; i += blockDim.x) {
    const int ks = i / 8;
    const int slot = i % 8;  // (tig, half)
    const int k = 8 * ks + slot / 2 + 4 * (slot % 2);
    int offset = 0;
    if (k < a.reduction) {
      const int c = k / area;
      const int tap = k - c * area;
      const int kh = tap / s.shape.kernelWidth;
      offset = c * s.planeStride + kh * s.rowPitch + (tap - kh * s.shape.kernelWidth);
    }
    shared[i] = offset;
  }
}

// Where each product row of a step lies, the same for every step: its pixel's offset in the
// staging buffer, and its output element relative to the step's first image (map 0). Made once
// a block, so the warps never divide to find a row.
__device__ __forceinline__ void stageRowTables(const MmaConvArgs& a, int* staged, int* output) {
  const int stepRows = a.staging.imagesPerStep * a.pixelsPerImage;
  const int outPlane = a.epilogue.pooling != FusedPooling::kNone ? a.pooledHeight * a.pooledWidth
                                                                 : a.staging.shape.outHeight * a.staging.shape.outWidth;
  for (int m = threadIdx.x; m < stepRows; m += blockDim.x) {
    const RowPlace place = placeOf(a, m);
    staged[m] = place.staged;
    output[m] = place.image * a.staging.shape.outChannels * outPlane + place.pixel;
  }
}

// One k-step of a warp tile: gathers the A fragments from the staged images, multiplies them
// with every live n-tile's B fragment. Masked: the last, partial step (taps past K read as 0).
template <Precision P, int MTiles, bool Masked>
__device__ __forceinline__ void multiplyStep(const MmaConvArgs& a, const float* buffer, const float* weights,
                                             const int* taps, const int (&rowOffset)[MTiles][2], int ks, int nt0,
                                             int liveNTiles, float (&acc)[MTiles][kNTilesPerWarp][4]) {
  const int lane = threadIdx.x % 32;
  const int tig = lane % 4;
  const int2 tap = reinterpret_cast<const int2*>(taps)[4 * ks + tig];
  const bool lowTap = !Masked || 8 * ks + tig < a.reduction;
  const bool highTap = !Masked || 8 * ks + tig + 4 < a.reduction;
  uint32_t bBig[kNTilesPerWarp][2], bSmall[kNTilesPerWarp][2];
#pragma unroll
  for (int nt = 0; nt < kNTilesPerWarp; ++nt) {
    if (nt >= liveNTiles) break;
    const float* fragment = weights + ((ks * a.nTiles + nt0 + nt) * 32 + lane) * kFragmentFloats<P>;
    if constexpr (P == Precision::kTf32) {
      const float2 pair = *reinterpret_cast<const float2*>(fragment);
      bBig[nt][0] = __float_as_uint(pair.x);
      bBig[nt][1] = __float_as_uint(pair.y);
    } else {
      const float4 parts = *reinterpret_cast<const float4*>(fragment);
      bBig[nt][0] = __float_as_uint(parts.x);
      bBig[nt][1] = __float_as_uint(parts.y);
      bSmall[nt][0] = __float_as_uint(parts.z);
      bSmall[nt][1] = __float_as_uint(parts.w);
    }
  }
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt) {
    // A fragment: (group, tig), (group + 8, tig), (group, tig + 4), (group + 8, tig + 4).
    float x[4];
    x[0] = lowTap ? buffer[rowOffset[mt][0] + tap.x] : 0.0f;
    x[1] = lowTap ? buffer[rowOffset[mt][1] + tap.x] : 0.0f;
    x[2] = highTap ? buffer[rowOffset[mt][0] + tap.y] : 0.0f;
    x[3] = highTap ? buffer[rowOffset[mt][1] + tap.y] : 0.0f;
    uint32_t aBig[4], aSmall[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (P == Precision::kTf32) {
        aBig[i] = __float_as_uint(x[i]);  // rounded to TF32 when the step was staged
      } else {
        aBig[i] = toTf32(x[i]);
        aSmall[i] = toTf32(x[i] - __uint_as_float(aBig[i]));
      }
    }
#pragma unroll
    for (int nt = 0; nt < kNTilesPerWarp; ++nt) {
      if (nt >= liveNTiles) break;
      if constexpr (P == Precision::kTf32x3) {
        mmaTf32(acc[mt][nt], aBig, bSmall[nt]);  // the small terms first, while acc is small
        mmaTf32(acc[mt][nt], aSmall, bBig[nt]);
      }
      mmaTf32(acc[mt][nt], aBig, bBig[nt]);
    }
  }
}

// Where the output of product row m goes: element (image, map 0, pixel) of the output, or -1
// when the row is past the step or its image past the batch.
__device__ __forceinline__ int64_t outputBase(const MmaConvArgs& a, const int* rowOutput, int m, int stepRows, int step,
                                              int outPlane) {
  if (m >= stepRows) return -1;
  const int64_t firstImage = int64_t{step} * a.staging.imagesPerStep;
  const int64_t imageElements = int64_t{a.staging.shape.outChannels} * outPlane;
  if (rowOutput[m] >= (a.staging.shape.batch - firstImage) * imageElements) return -1;  // past the batch
  return firstImage * imageElements + rowOutput[m];
}

// One warp's tile: MTiles x 16 product rows, starting at step row m0, by up to 32 maps starting
// at map tile nt0. `buffer` holds the step's staged images.
template <Precision P, int MTiles>
__device__ __forceinline__ void computeWarpTile(const MmaConvArgs& a, const float* buffer, const float* weights,
                                                const int* taps, const int* rowStaged, const int* rowOutput,
                                                int stepRows, int step, int m0, int nt0) {
  static_assert(MTiles % 2 == 0, "the pooled epilogue hands a lane one window of every four row pairs");
  const int lane = threadIdx.x % 32;
  const int group = lane / 4;  // the fragment's row (and B's column)
  const int tig = lane % 4;    // the fragment's column pair
  const int liveNTiles = min(kNTilesPerWarp, a.nTiles - nt0);

  // Rows group and group + 8 of each m-tile; rows past the step read offset 0 (finite, unused).
  // Read once through a volatile pointer: near its register limit the compiler would otherwise
  // re-read the table in every k-step (8 more shared loads per 12 mma: conv2 ran 18% slower).
  const volatile int* stagedTable = rowStaged;
  int rowOffset[MTiles][2];
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + 16 * mt + group + 8 * h;
      rowOffset[mt][h] = m < stepRows ? stagedTable[m] : 0;
    }

  float acc[MTiles][kNTilesPerWarp][4];
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTilesPerWarp; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0f;

  const int fullSteps = a.reduction / 8;
#pragma unroll 2
  for (int ks = 0; ks < fullSteps; ++ks)
    multiplyStep<P, MTiles, false>(a, buffer, weights, taps, rowOffset, ks, nt0, liveNTiles, acc);
  if (fullSteps < a.kSteps)
    multiplyStep<P, MTiles, true>(a, buffer, weights, taps, rowOffset, fullSteps, nt0, liveNTiles, acc);

  // Epilogue. Accumulator i of a tile is row group + 8 * (i / 2), map 2 * tig + i % 2; the pair
  // p = 2 * mt + h names the row group + 16 * mt + 8 * h.
  const int maps = a.staging.shape.outChannels;
  const FusedEpilogue& epilogue = a.epilogue;
  if (epilogue.pooling == FusedPooling::kNone) {
    const int outPlane = a.staging.shape.outHeight * a.staging.shape.outWidth;
#pragma unroll
    for (int p = 0; p < 2 * MTiles; ++p) {
      const int64_t base = outputBase(a, rowOutput, m0 + 16 * (p / 2) + group + 8 * (p % 2), stepRows, step, outPlane);
#pragma unroll
      for (int nt = 0; nt < kNTilesPerWarp; ++nt) {
        if (nt >= liveNTiles) break;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int map = 8 * (nt0 + nt) + 2 * tig + j;
          if (base < 0 || map >= maps) continue;
          const float value = acc[p / 2][nt][2 * (p % 2) + j] + (epilogue.bias ? epilogue.bias[map] : 0.0f);
          a.output[base + int64_t{map} * outPlane] = activate(epilogue.activation, value);
        }
      }
    }
    return;
  }

  // Pooled: a window's four rows are lanes 4 and 8 apart (group bits 0 and 1), and after two
  // butterfly shuffles all four hold the window's result. Of every four row pairs, lane r of the
  // window (group % 4) then finishes and stores the pair r: one activation per pooled output.
  // Max pooling comes before the bias and the activation: both are monotonic, as is rounding,
  // so the maximum of f(x + b) is f(max(x) + b). Average pooling needs them first.
  const int outPlane = a.pooledHeight * a.pooledWidth;
  const int r = group % kWindowPixels;
  constexpr int kSets = 2 * MTiles / kWindowPixels;
  int64_t base[kSets];
#pragma unroll
  for (int set = 0; set < kSets; ++set) {
    const int p = kWindowPixels * set + r;
    base[set] = outputBase(a, rowOutput, m0 + 16 * (p / 2) + (group - r) + 8 * (p % 2), stepRows, step, outPlane);
  }
  const bool maxPool = epilogue.pooling == FusedPooling::kMax;
#pragma unroll
  for (int nt = 0; nt < kNTilesPerWarp; ++nt) {
    if (nt >= liveNTiles) break;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int map = 8 * (nt0 + nt) + 2 * tig + j;
      const float bias = epilogue.bias && map < maps ? epilogue.bias[map] : 0.0f;
      float pooled[2 * MTiles];
#pragma unroll
      for (int p = 0; p < 2 * MTiles; ++p) {
        float x = acc[p / 2][nt][2 * (p % 2) + j];
        if (!maxPool) x = activate(epilogue.activation, x + bias);
        const float x1 = __shfl_xor_sync(0xffffffffu, x, 4);
        x = maxPool ? fmaxf(x, x1) : x + x1;
        const float x2 = __shfl_xor_sync(0xffffffffu, x, 8);
        pooled[p] = maxPool ? fmaxf(x, x2) : x + x2;
      }
#pragma unroll
      for (int set = 0; set < kSets; ++set) {
        const float* four = pooled + kWindowPixels * set;
        const float mine = r == 0 ? four[0] : r == 1 ? four[1] : r == 2 ? four[2] : four[3];
        if (base[set] < 0 || map >= maps) continue;
        a.output[base[set] + int64_t{map} * outPlane] =
            maxPool ? activate(epilogue.activation, mine + bias) : mine * (1.0f / kWindowPixels);
      }
    }
  }
}

template <Precision P, int MTiles>
__device__ __forceinline__ void runImplicitGemm(const MmaConvArgs& a) {
  const direct_conv::DirectConvArgs& s = a.staging;
  extern __shared__ float4 sharedStorage[];
  float* const weights = reinterpret_cast<float*>(sharedStorage);
  int* const taps = reinterpret_cast<int*>(weights + a.weightFloats);
  int* const rowStaged = taps + a.tapTableInts;
  int* const rowOutput = rowStaged + a.rowTableInts;
  float* const buffer0 = reinterpret_cast<float*>(rowOutput + a.rowTableInts);
  float* const buffer1 = buffer0 + s.bufferFloats;

  // Zero both buffers once: the padding halo stays zero (the staging writes only the image).
  for (int i = threadIdx.x; i < 2 * s.bufferFloats; i += blockDim.x) buffer0[i] = 0.0f;
  stageWeightFragments<P>(a, weights);
  stageTapTable(a, taps);
  stageRowTables(a, rowStaged, rowOutput);
  __syncthreads();

  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const int stepRows = s.imagesPerStep * a.pixelsPerImage;
  const int rowsPerTask = 16 * MTiles;
  const int rowTasks = (stepRows + rowsPerTask - 1) / rowsPerTask;
  const int tasks = rowTasks * a.nChunks;

  int step = blockIdx.x;
  if (step < s.numSteps) direct_conv::stageImages(s, step, buffer0);
  direct_conv::commitCopies();
  for (int iteration = 0; step < s.numSteps; ++iteration, step += gridDim.x) {
    const bool odd = iteration & 1;
    const float* current = odd ? buffer1 : buffer0;
    if (step + static_cast<int>(gridDim.x) < s.numSteps)
      direct_conv::stageImages(s, step + gridDim.x, odd ? buffer0 : buffer1);
    direct_conv::commitCopies();
    direct_conv::waitForAllButNewestCopies();
    __syncthreads();
    if constexpr (P == Precision::kTf32) {
      // Round the step's images to TF32 once, here, rather than at each of the K reads of a value.
      float* images = odd ? buffer1 : buffer0;
      for (int i = threadIdx.x; i < s.imagesPerStep * s.imageStride; i += blockDim.x)
        images[i] = __uint_as_float(toTf32(images[i]));
      __syncthreads();
    }
    // The last step's rows of images past the batch are computed from zeros and not stored.
    for (int task = warp; task < tasks; task += warps) {
      const int chunk = task / rowTasks;
      const int m0 = (task - chunk * rowTasks) * rowsPerTask;
      computeWarpTile<P, MTiles>(a, current, weights, taps, rowStaged, rowOutput, stepRows, step, m0,
                                 chunk * kNTilesPerWarp);
    }
    __syncthreads();  // everyone is done with `current` before the next iteration refills it
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

// Lays out shared memory and chooses the images per step: as many warps busy as possible (up to
// kMaxWarps, one block a multiprocessor), then as few idle warp slots in the last round of tasks.
// `pooled`: the product rows are the pooling windows' pixels.
inline MmaConvPlan planImplicitGemm(const ConvProblem& p, const float* input, bool pooled, Precision precision,
                                    int mTiles, size_t sharedLimit, int multiprocessors) {
  MmaConvPlan plan;
  MmaConvArgs& a = plan.args;
  direct_conv::DirectConvArgs& s = a.staging;
  s.shape = shapeOf(p);
  if (s.shape.outHeight <= 0 || s.shape.outWidth <= 0 || p.batch <= 0) return plan;
  const int64_t paddedPlane =
      (int64_t{p.inHeight} + p.padTop + p.padBottom) * (int64_t{p.inWidth} + p.padLeft + p.padRight);
  if (int64_t{p.inChannels} * paddedPlane > direct_conv::kMaxPlannedElements ||
      p.weightElements() > direct_conv::kMaxPlannedElements)
    return plan;

  a.reduction = p.inChannels * p.kernelHeight * p.kernelWidth;
  a.kSteps = (a.reduction + 7) / 8;
  a.nTiles = (p.outChannels + 7) / 8;
  a.nChunks = (a.nTiles + kNTilesPerWarp - 1) / kNTilesPerWarp;
  a.weightFloats =
      a.kSteps * a.nTiles * 32 *
      (precision == Precision::kTf32 ? kFragmentFloats<Precision::kTf32> : kFragmentFloats<Precision::kTf32x3>);
  a.tapTableInts = a.kSteps * 8;
  a.pooledHeight = pooled ? s.shape.outHeight / 2 : s.shape.outHeight;
  a.pooledWidth = pooled ? s.shape.outWidth / 2 : s.shape.outWidth;
  a.pixelsPerImage = pooled ? kWindowPixels * a.pooledHeight * a.pooledWidth : s.shape.outHeight * s.shape.outWidth;
  if (a.pixelsPerImage <= 0) return plan;
  // A row's output offset within a step (images x maps x plane) is an int.
  const auto offsetsFit = [&](int images) {
    return int64_t{images} * p.outChannels * a.pixelsPerImage < (int64_t{1} << 31);
  };
  if (!offsetsFit(1)) return plan;

  s.flatCopy = !p.hasPadding();
  s.rowPitch = p.inWidth + p.padLeft + p.padRight;
  s.planeStride = static_cast<int>(paddedPlane);
  s.imageStride = p.inChannels * s.planeStride;
  s.vectorCopy = s.flatCopy && s.imageStride % 4 == 0 && reinterpret_cast<uintptr_t>(input) % 16 == 0;
  auto bufferFloats = [&](int images) { return direct_conv::roundUp(images * s.imageStride, 4); };
  // Counted in 4-byte words: the tap and row tables are ints, laid out between the floats.
  static_assert(sizeof(int) == sizeof(float), "the shared-memory layout counts ints and floats alike");
  auto sharedBytes = [&](int images) {
    return (static_cast<size_t>(a.weightFloats) + direct_conv::roundUp(a.tapTableInts, 4) +
            2 * static_cast<size_t>(direct_conv::roundUp(images * a.pixelsPerImage, 4)) +
            2 * static_cast<size_t>(bufferFloats(images))) *
           sizeof(float);
  };
  if (sharedBytes(1) > sharedLimit) return plan;

  const int busyImages = std::max(1, (p.batch + multiprocessors - 1) / multiprocessors);
  auto usefulWarps = [&](int images, int* warpsOut) {
    const int rowTasks = (images * a.pixelsPerImage + 16 * mTiles - 1) / (16 * mTiles);
    const int64_t tasks = int64_t{rowTasks} * a.nChunks;
    const int warps = static_cast<int>(std::min<int64_t>(tasks, kMaxWarps));
    const int64_t rounds = (tasks + warps - 1) / warps;
    *warpsOut = warps;
    return double(tasks) / double(rounds);  // warps busy on average
  };
  int images = 1, warps = 0;
  double best = usefulWarps(1, &warps);
  for (int more = 2; more <= busyImages && sharedBytes(more) <= sharedLimit && offsetsFit(more); ++more) {
    int w = 0;
    const double score = usefulWarps(more, &w);
    if (score > best + 1e-9) {
      best = score;
      images = more;
    }
    if (int64_t{more} * a.pixelsPerImage >= int64_t{kMaxWarps} * 16 * mTiles * 4) break;  // enough rounds
  }
  usefulWarps(images, &warps);
  s.imagesPerStep = images;
  s.numSteps = (p.batch + images - 1) / images;
  s.bufferFloats = bufferFloats(images);
  a.rowTableInts = direct_conv::roundUp(images * a.pixelsPerImage, 4);
  s.itemsPerStep = 0;  // the direct kernels' register tiles; unused here
  plan.threads = 32 * warps;
  plan.sharedBytes = sharedBytes(images);
  plan.fits = true;
  return plan;
}

// Why the kernel cannot take `p`, or "".
inline std::string implicitGemmUnsupportedReason(const ConvProblem& p, Precision precision, int mTiles) {
  const direct_conv::DirectConvLimits limits = direct_conv::directConvLimits();
  if (planImplicitGemm(p, nullptr, false, precision, mTiles, limits.sharedOptin, limits.multiprocessors).fits)
    return {};
  return "one image, the weights and the tap table do not fit in the " + std::to_string(limits.sharedOptin / 1024) +
         " KB of shared memory a block can have" + (limits.reference ? " (an H100's)" : "");
}

inline KernelLaunchGeometry implicitGemmGeometry(const ConvProblem& p, const std::string& kernel, Precision precision,
                                                 int mTiles) {
  const direct_conv::DirectConvLimits limits = direct_conv::directConvLimits();
  const MmaConvPlan plan =
      planImplicitGemm(p, nullptr, false, precision, mTiles, limits.sharedOptin, limits.multiprocessors);
  KernelLaunchGeometry g;
  g.kernel = kernel;
  g.gridX = plan.args.staging.numSteps;
  g.blockX = plan.threads;
  g.tileHeight = 16 * mTiles;
  g.tileWidth = 1;
  g.sharedBytes = static_cast<int64_t>(plan.sharedBytes);
  g.mapping = "persistent grid: blocks take steps of " + std::to_string(plan.args.staging.imagesPerStep) +
              " image(s) staged in shared memory with all weights; each warp computes " + std::to_string(16 * mTiles) +
              " output pixels (in row-major order) x up to 32 maps as an implicit matrix product on tensor "
              "cores (mma m16n8k8: 16 pixels x 8 maps x 8 taps an instruction; grid shown: " +
              std::to_string(plan.args.staging.numSteps) + " steps)";
  return g;
}

template <class Kernel>
void launchImplicitGemm(const ConvLaunch& l, const ConvEpilogue& epilogue, Kernel kernel, Precision precision,
                        int mTiles, const char* name) {
  requireValidLaunch(l, name);
  direct_conv::DirectConvDeviceState& device = direct_conv::deviceState(l.context, name);
  MmaConvPlan plan = planImplicitGemm(l.problem, l.input, epilogue.hasPool, precision, mTiles, device.sharedOptin,
                                      device.multiprocessors);
  if (!plan.fits) throw Error(std::string(name) + ": " + l.problem.describe() + " does not fit in shared memory");
  setEpilogue(plan.args, l.problem, epilogue);
  plan.args.staging.input = l.input;
  plan.args.staging.weights = l.weights;
  plan.args.staging.output = nullptr;
  plan.args.output = l.output;
  const int blocks = direct_conv::residentBlocks(device, kernel, plan.threads, plan.sharedBytes);
  if (blocks <= 0) throw Error(std::string(name) + ": no block fits on a multiprocessor for " + l.problem.describe());
  const int grid = std::min(plan.args.staging.numSteps, blocks * device.multiprocessors);
  TracedScope scope(l.context, name);
  kernel<<<grid, plan.threads, plan.sharedBytes, l.context.stream()>>>(plan.args);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace convscope::gpu::implicit_gemm
