// The tensor-core path that reads both operands from shared memory (sm_90a's wgmma "SS" form),
// for stride-1 convolutions in the TF32 variant (11_tensor_tf32.cu), on compute capability 9.0
// (sharedOperandChoice below says for which layers): the Hopper route's next step after the
// register-A wgmma of implicit_gemm_mma.cuh, which the loads of A into registers bounded.
//
// A block stages a step's images once in the entry layout of wgmma_operand_layout.h, where every
// k-step's im2col tile is a window at a fixed offset: a warpgroup's task (8 x 8 output pixels of
// one image x up to 32 maps) is one descriptor for A, moved by an offset each k-step, and one for
// the weights, which stay resident as core matrices (the same layout as the register-A path's).
// No thread loads A or B: a task issues its k-steps' wgmma back to back, then waits once.
// The epilogue: a lane holds output rows 2w and 2w + 1 of the tile (w: its warp in the group) at
// column `group`, so a 2x2 window's vertical pair is in one lane and the horizontal pair 4 lanes
// away: one shuffle a pooled value.
//
// Not the TMA's im2col mode: a tensor map in that mode copies each k-step's tile from global
// memory, once per tap -- for a 7x7 kernel 49 copies of every input, where this stages it once
// (docs/performance.md, "wgmma from shared memory").
#pragma once

#include "gpu/kernels/implicit_gemm_mma.cuh"
#include "gpu/kernels/wgmma_operand_layout.h"

namespace convscope::gpu::implicit_gemm {

// Bytes left unused at the end of shared memory. compute-sanitizer's memcheck counts a wgmma's A
// operand as 2,048 contiguous bytes from the descriptor's start (64 rows x 8 taps x 4 bytes); this
// path's core matrices are a staged row apart, so for a tile near the end of small images that
// range passed the allocation's end while every row the tensor cores read was inside (the host
// test checks each row: tests/core/test_wgmma_operand_layout.cpp). The slack keeps the tool's
// range inside the allocation: memcheck found 126 such reports before it (docs/performance.md).
constexpr size_t kSanitizerSlackBytes = 2048;

// The k-steps a layer may have on this path: its table of offsets is a kernel parameter.
constexpr int kMaxTabledKSteps = 256;

struct SharedOperandArgs {
  const float* input;
  const float* weights;
  float* output;
  ConvShape shape;
  FusedEpilogue epilogue;
  OperandLayout layout;
  int pooledHeight, pooledWidth;  // the pooled output (the conv output when not pooled)
  int imagesPerStep, numSteps;
  int imageFloats;  // one input image as it lies in memory
  int rawFloats;    // a step's images as they lie, rounded up to 4
  int vectorCopy;   // the raw copy in 16-byte pieces
  int nTiles;       // ceil(outChannels / 8) rounded up to whole tasks' n-tiles
  int nChunks;      // nTiles / the kernel's NTiles
  int weightFloats;
  int tilesPerImage;
  // Each k-step's A offset in entries (kStepEntryOffset), in the kernel's parameters: read with
  // a uniform index they stay on the uniform datapath, one load a k-step where counting the three
  // loops took some 17 dependent uniform instructions (docs/performance.md).
  int kStepOffsets[kMaxTabledKSteps];
};

constexpr int kSharedOperandWarpgroups = kMaxWarps / 4;
// Tiles a warpgroup's task computes together, each its own accumulators: the task's setup, the
// k-loop's counting and its wait are shared by both (with one tile a task, conv1 issued four
// times the instructions of the mma.sync path: docs/performance.md).
constexpr int kTilesPerTask = 2;

#if CONVSCOPE_HAS_WGMMA
// d = A * B (+ d when `accumulate`) for one k-step of a 64-row tile and NTiles x 8 maps, both
// operands by descriptor. The first k-step does not add: the accumulators are never zeroed by
// other instructions, which would make ptxas serialize the chain.
template <int NTiles>
__device__ __forceinline__ void sharedOperandMma(float (&d)[NTiles][4], uint64_t a, uint64_t b, int accumulate) {
  if constexpr (NTiles == 1)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3])
        : "l"(a), "l"(b), "r"(accumulate));
  if constexpr (NTiles == 2)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),
          "+f"(d[1][3])
        : "l"(a), "l"(b), "r"(accumulate));
  if constexpr (NTiles == 3)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %14, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n24k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, %12, %13, p, 1, "
        "1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),
          "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3])
        : "l"(a), "l"(b), "r"(accumulate));
  if constexpr (NTiles == 4)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, "
        "%16, %17, p, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),
          "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]),
          "+f"(d[3][2]), "+f"(d[3][3])
        : "l"(a), "l"(b), "r"(accumulate));
}
#endif

// The weights as core matrices (weightOperandOffset's warpgroup layout), in the k-steps of the
// entry layout, rounded to TF32.
__device__ __forceinline__ void stageSharedOperandWeights(const SharedOperandArgs& a, float* shared) {
  forEachWeightInOrder(a.weights, a.shape, [&](int n, int c, int kh, int kw, float value) {
    const KStepTap at = kStepTapOfWeight(a.layout, c, kh, kw);
    shared[weightOperandOffset(MmaPath::kWarpgroup, a.nTiles, a.layout.kSteps, false, 2 * at.kStep + at.half, at.tap, n,
                               0)] = __uint_as_float(toTf32(value));
  });
}

// Writes every entry of the step's images (zeros where the layout holds no input), rounded to
// TF32. A thread takes a staged pixel (image, y, x) and writes its entry in every plane (the
// bounds are checked once for all of them); the threads' pixels are consecutive, and each moves
// on by blockDim pixels, counted on, not divided out.
__device__ __forceinline__ void stageSharedOperandImages(const SharedOperandArgs& a, int step, const float* raw,
                                                         float4* staged) {
  const OperandLayout& l = a.layout;
  const int count = min(a.imagesPerStep, a.shape.batch - step * a.imagesPerStep);
  const int inPlane = l.inHeight * l.inWidth;
  const int dy = blockDim.x / l.stagedWidth, dx = blockDim.x - dy * l.stagedWidth;
  int image = 0, y = threadIdx.x / l.stagedWidth, x = threadIdx.x - y * l.stagedWidth;
  const auto carry = [&] {
    while (y >= l.stagedHeight) y -= l.stagedHeight, ++image;
  };
  const bool quads = l.packing == EntryPacking::kChannelQuads;
  for (carry(); image < count;) {
    const float* source = raw + image * a.imageFloats;
    float4* entry = staged + image * l.imageEntries + y * l.stagedWidth + x;
    const int iy = y - l.padTop, ix = x - l.padLeft;
    const bool rowInside = iy >= 0 && iy < l.inHeight;
    for (int plane = 0; plane < l.planes; ++plane, entry += l.planeEntries) {
      float v[kEntryFloats];
#pragma unroll
      for (int t = 0; t < kEntryFloats; ++t) {
        const int c = quads ? kEntryFloats * plane + t : plane;
        const int column = quads ? ix : ix + t;
        const bool inside = rowInside && c < l.channels && column >= 0 && column < l.inWidth;
        v[t] = inside ? __uint_as_float(toTf32(source[c * inPlane + iy * l.inWidth + column])) : 0.0f;
      }
      *entry = make_float4(v[0], v[1], v[2], v[3]);
    }
    x += dx, y += dy;
    if (x >= l.stagedWidth) x -= l.stagedWidth, ++y;
    carry();
  }
}

// The epilogue of a warpgroup's tile: (tile row 2w + i / 2, column `group`) of the 8 x 8 pixels
// at (oy0, ox0), maps 8 (nt0 + nt) + 2 tig + i % 2 (i: the accumulator).
template <int NTiles, FusedPooling Pooling, FusedActivation Activation>
__device__ __forceinline__ void storeSharedOperandTile(const SharedOperandArgs& a, const float (&acc)[NTiles][4],
                                                       int64_t image, int oy0, int ox0, int nt0) {
  const int lane = threadIdx.x % 32;
  const int w = threadIdx.x / 32 % 4;
  const int group = lane / 4, tig = lane % 4;
  const int maps = a.shape.outChannels;
  const float* bias = a.epilogue.bias;
  if constexpr (Pooling == FusedPooling::kNone) {
    const int oh = a.shape.outHeight, ow = a.shape.outWidth;
    const int x = ox0 + group, y = oy0 + 2 * w;
    float* const out = a.output + image * maps * oh * ow + y * ow + x;
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int map = 8 * (nt0 + nt) + 2 * tig + i % 2;
        if (map >= maps || y + i / 2 >= oh || x >= ow) continue;
        const float value = acc[nt][i] + (bias ? bias[map] : 0.0f);
        out[map * oh * ow + i / 2 * ow] = activateAs<Activation, true>(value);
      }
  } else {
    // Max pooling before the bias and a nondecreasing activation; average pooling, and max
    // pooling after an activation that dips (HardSwish), after them.
    constexpr bool maxPool = Pooling == FusedPooling::kMax;
    constexpr bool activateFirst = !maxPool || !maxPoolCommutesWith(Activation);
    const int ph = oy0 / 2 + w, pw = (ox0 + group) / 2;
    const bool stores = group % 2 == 0 && ph < a.pooledHeight && pw < a.pooledWidth;
    const int plane = a.pooledHeight * a.pooledWidth;
    float* const out = a.output + image * maps * plane + ph * a.pooledWidth + pw;
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt)
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int map = 8 * (nt0 + nt) + 2 * tig + j;
        const float b = bias && map < maps ? bias[map] : 0.0f;
        float top = acc[nt][j], bottom = acc[nt][2 + j];
        if constexpr (activateFirst) {
          top = activateAs<Activation, true>(top + b);
          bottom = activateAs<Activation, true>(bottom + b);
        }
        const float column = maxPool ? fmaxf(top, bottom) : top + bottom;
        const float other = __shfl_xor_sync(0xffffffffu, column, 4);
        const float window = maxPool ? fmaxf(column, other) : column + other;
        if (!stores || map >= maps) continue;
        const float pooled = !maxPool        ? window * (1.0f / kWindowPixels)
                             : activateFirst ? window
                                             : activateAs<Activation, true>(window + b);
        out[map * plane] = pooled;
      }
  }
}

template <int NTiles, FusedPooling Pooling, FusedActivation Activation>
__device__ __forceinline__ void runSharedOperandGemm(const SharedOperandArgs& a) {
#if CONVSCOPE_HAS_WGMMA
  extern __shared__ float4 sharedStorage[];
  float* const weights = reinterpret_cast<float*>(sharedStorage);
  float* const raw = weights + a.weightFloats;
  float4* const staged = reinterpret_cast<float4*>(raw + a.rawFloats);
  const OperandLayout& l = a.layout;
  const int stepTiles = a.imagesPerStep * a.tilesPerImage;
  // The step's tiles, the same every step, made once: (origin entry, image, oy0, ox0). A task
  // reads its tiles here instead of dividing (the divisions were a fifth of conv1's instructions).
  int4* const tiles = reinterpret_cast<int4*>(staged + a.imagesPerStep * l.imageEntries);
  for (int g = threadIdx.x; g < stepTiles; g += blockDim.x) {
    const int image = g / a.tilesPerImage;
    const int t = g - image * a.tilesPerImage;
    const int oy0 = kTileSide * (t / l.tileCols), ox0 = kTileSide * (t % l.tileCols);
    tiles[g] = make_int4(image * l.imageEntries + oy0 * l.stagedWidth + ox0, image, oy0, ox0);
  }

  for (int i = threadIdx.x; i < a.weightFloats + a.rawFloats; i += blockDim.x) weights[i] = 0.0f;
  for (int i = threadIdx.x; i < a.imagesPerStep * l.imageEntries; i += blockDim.x) staged[i] = make_float4(0, 0, 0, 0);
  __syncthreads();
  stageSharedOperandWeights(a, weights);

  // Warp-uniform in the compiler's eyes too, so that the tasks' descriptors are computed on the
  // uniform datapath, where a wgmma takes them.
  const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
  const int tileTasks = (stepTiles + kTilesPerTask - 1) / kTilesPerTask;
  const uint64_t weightsDescriptor = coreMatrixDescriptor(static_cast<uint32_t>(__cvta_generic_to_shared(weights)));
  const uint32_t stepUnits = a.nTiles * 64 * sizeof(float) / 16;  // a k-step's weights, in 16-byte units
  const uint32_t stagedBase = static_cast<uint32_t>(__cvta_generic_to_shared(staged));
  const uint32_t leadingBytes = l.leadingEntries * 16, strideBytes = l.stagedWidth * 16;

  int step = blockIdx.x;
  if (step < a.numSteps)
    copyImagesAsync(a.input, a.shape.batch, a.imagesPerStep, a.imageFloats, a.vectorCopy, step, raw);
  direct_conv::commitCopies();
  for (; step < a.numSteps; step += gridDim.x) {
    waitForAllCopies();
    __syncthreads();  // the step's raw images are in; every task of the last step is done
    stageSharedOperandImages(a, step, raw, staged);
    // The tensor cores read the entries (and the weights) through the async proxy.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (step + static_cast<int>(gridDim.x) < a.numSteps)
      copyImagesAsync(a.input, a.shape.batch, a.imagesPerStep, a.imageFloats, a.vectorCopy, step + gridDim.x, raw);
    direct_conv::commitCopies();
    const int64_t firstImage = int64_t{step} * a.imagesPerStep;
    // A warpgroup takes every fourth task, counted on as (chunk, tile task) without dividing.
    int chunk = 0, tileTask = warpgroup;
    const auto carry = [&] {
      for (; tileTask >= tileTasks; tileTask -= tileTasks) ++chunk;
    };
    for (carry(); chunk < a.nChunks; tileTask += kSharedOperandWarpgroups, carry()) {
      const int first = tileTask * kTilesPerTask;
      // The task's tiles: consecutive in the step; one past the step or of an image past the
      // batch is computed on the first tile's entries and not stored. Read from the table, then
      // broadcast from lane 0: the compiler then knows them warp-uniform and keeps the descriptors
      // on the uniform datapath, where a wgmma reads them (else each k-step moves them there).
      int image[kTilesPerTask], oy0[kTilesPerTask], ox0[kTilesPerTask], delta[kTilesPerTask];
      bool live[kTilesPerTask];
#pragma unroll
      for (int i = 0; i < kTilesPerTask; ++i) {
        const int4 tile = tiles[first + i < stepTiles ? first + i : first];
        delta[i] = __shfl_sync(0xffffffffu, tile.x, 0);
        image[i] = __shfl_sync(0xffffffffu, tile.y, 0);
        oy0[i] = __shfl_sync(0xffffffffu, tile.z, 0);
        ox0[i] = __shfl_sync(0xffffffffu, tile.w, 0);
        live[i] = first + i < stepTiles && firstImage + image[i] < a.shape.batch;
      }
      if (!live[0]) continue;  // the same for the whole warpgroup; a later tile is live only if the first is
      const uint32_t origin = stagedBase + 16u * static_cast<uint32_t>(delta[0]);
#pragma unroll
      for (int i = kTilesPerTask - 1; i >= 0; --i) delta[i] -= delta[0];
      // An entry is 16 bytes, the descriptor's address unit: offsets in entries add to its low
      // word as they are (the shared addresses stay below 2^18 bytes: no carry out of the field).
      const uint64_t tileA = sharedMatrixDescriptor(origin, leadingBytes, strideBytes);
      const uint32_t aLow = static_cast<uint32_t>(tileA), aHigh = static_cast<uint32_t>(tileA >> 32);
      uint32_t bLow = static_cast<uint32_t>(weightsDescriptor) + chunk * NTiles * 256 / 16;
      const uint32_t bHigh = static_cast<uint32_t>(weightsDescriptor >> 32);

      float acc[kTilesPerTask][NTiles][4];
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll 2
      for (int ks = 0; ks < l.kSteps; ++ks, bLow += stepUnits) {
        const uint32_t stepA = aLow + static_cast<uint32_t>(a.kStepOffsets[ks]);
        const uint64_t b = (static_cast<uint64_t>(bHigh) << 32) | bLow;
#pragma unroll
        for (int i = 0; i < kTilesPerTask; ++i)
          sharedOperandMma<NTiles>(acc[i], (static_cast<uint64_t>(aHigh) << 32) | (stepA + delta[i]), b, ks);
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
      for (int i = 0; i < kTilesPerTask; ++i) {
#pragma unroll
        for (int nt = 0; nt < NTiles; ++nt)
#pragma unroll
          for (int r = 0; r < 4; ++r) asm volatile("" : "+f"(acc[i][nt][r])::"memory");
        if (live[i])
          storeSharedOperandTile<NTiles, Pooling, Activation>(a, acc[i], firstImage + image[i], oy0[i], ox0[i],
                                                              chunk * NTiles);
      }
    }
  }
#else
  (void)a;
  __trap();  // chosen only on compute capability 9.0, whose machine code (sm_90a) has wgmma
#endif
}

template <int NTiles>
__global__ void __launch_bounds__(32 * kMaxWarps, 1) conv_shared_operands_tf32(const SharedOperandArgs args) {
  // The epilogue's pooling and activation as template arguments: every shape the engine runs.
  withFusedEpilogue(args.epilogue, [&](auto pooling, auto activation) {
    runSharedOperandGemm<NTiles, decltype(pooling)::value, decltype(activation)::value>(args);
  });
}

// ---------------------------------------------------------------------------------------------
// Host side.

// Which layers take the path on compute capability 9.0, in builds with sm_90a machine code, as
// CONVSCOPE_TENSOR_MMA says (read once):
//   unset (the default): layers whose entries pack channels (four or more input channels), where
//     it was measured faster than mma.sync -- the course's conv2, 0.498 against 0.506 ms at batch
//     10,000 (ncu: 564 against 593 us); layers that pack taps (conv1's one channel) were slower
//     (0.700 against 0.556 ms) and stay on mma.sync (docs/performance.md, "wgmma from shared memory");
//   "wgmma-ss": every stride-1 layer it fits (to test and measure it everywhere);
//   "sync" or "wgmma": none (mma.sync, or the register-A wgmma of implicit_gemm_mma.cuh).
enum class SharedOperandChoice { kChannelQuads, kEveryLayer, kNone };

inline SharedOperandChoice sharedOperandChoice() {
  static const SharedOperandChoice choice = [] {
    const char* value = std::getenv("CONVSCOPE_TENSOR_MMA");
    if (!value || !*value) return SharedOperandChoice::kChannelQuads;
    if (std::string(value) == "wgmma-ss") return SharedOperandChoice::kEveryLayer;
    return SharedOperandChoice::kNone;
  }();
  return choice;
}

inline bool sharedOperandsTake(int computeMajor, int computeMinor, const OperandLayout& layout) {
#if defined(CONVSCOPE_HAVE_SM90A)
  if (computeMajor != 9 || computeMinor != 0) return false;
  switch (sharedOperandChoice()) {
    case SharedOperandChoice::kChannelQuads:
      return layout.packing == EntryPacking::kChannelQuads;
    case SharedOperandChoice::kEveryLayer:
      return true;
    case SharedOperandChoice::kNone:
      break;
  }
  return false;
#else
  (void)computeMajor, (void)computeMinor, (void)layout;
  return false;
#endif
}

struct SharedOperandPlan {
  bool fits = false;
  SharedOperandArgs args{};
  int nTilesPerTask = 0;
  int threads = 0;
  size_t sharedBytes = 0;
};

// The plan for `p` (stride 1 only), or fits = false. The images a step takes: the most that fit
// among those that keep the four warpgroups' rounds fullest, up to the images a multiprocessor
// has in the batch.
inline SharedOperandPlan planSharedOperands(const ConvProblem& p, const float* input, bool pooled, size_t sharedLimit,
                                            int multiprocessors) {
  SharedOperandPlan plan;
  SharedOperandArgs& a = plan.args;
  a.shape = shapeOf(p);
  if (p.strideHeight != 1 || p.strideWidth != 1 || a.shape.outHeight <= 0 || a.shape.outWidth <= 0 || p.batch <= 0)
    return plan;
  if (int64_t{p.inChannels} * p.inHeight * p.inWidth > direct_conv::kMaxPlannedElements ||
      p.weightElements() > direct_conv::kMaxPlannedElements ||
      int64_t{p.outHeight()} * p.outWidth() > direct_conv::kMaxPlannedElements)
    return plan;
  a.pooledHeight = pooled ? a.shape.outHeight / 2 : a.shape.outHeight;
  a.pooledWidth = pooled ? a.shape.outWidth / 2 : a.shape.outWidth;
  const int rows = pooled ? 2 * a.pooledHeight : a.shape.outHeight;
  const int cols = pooled ? 2 * a.pooledWidth : a.shape.outWidth;
  if (rows <= 0 || cols <= 0) return plan;
  a.layout = operandLayoutFor(p, rows, cols);
  const OperandLayout& l = a.layout;
  if (int64_t{l.planes} * l.stagedHeight * l.stagedWidth * kEntryFloats > direct_conv::kMaxPlannedElements) return plan;
  // A descriptor's stride field is 14 bits of 16-byte units.
  if (l.stagedWidth >= (1 << 14) || l.kSteps > kMaxTabledKSteps) return plan;
  for (int ks = 0; ks < l.kSteps; ++ks) a.kStepOffsets[ks] = kStepEntryOffset(l, ks);
  a.tilesPerImage = l.tileRows * l.tileCols;
  plan.nTilesPerTask = std::min((p.outChannels + 7) / 8, kMaxNTilesPerWarp);
  a.nTiles = roundUp((p.outChannels + 7) / 8, plan.nTilesPerTask);
  a.nChunks = a.nTiles / plan.nTilesPerTask;
  a.weightFloats = weightOperandFloats(a.nTiles, l.kSteps, false);
  a.imageFloats = p.inChannels * p.inHeight * p.inWidth;
  a.vectorCopy = a.imageFloats % 4 == 0 && reinterpret_cast<uintptr_t>(input) % 16 == 0;
  const auto sharedBytes = [&](int images) {
    return (static_cast<size_t>(a.weightFloats) + roundUp(images * a.imageFloats, 4) +
            static_cast<size_t>(images) * l.imageEntries * kEntryFloats +
            static_cast<size_t>(images) * a.tilesPerImage * 4) *
               sizeof(float) +
           kSanitizerSlackBytes;
  };
  // Offsets within a step are ints, and the staged addresses fit the descriptors' 18 bits.
  if (sharedBytes(1) > sharedLimit || sharedBytes(1) >= (size_t{1} << 18)) return plan;
  const int busyImages = std::max(1, (p.batch + multiprocessors - 1) / multiprocessors);
  const auto fullness = [&](int images) {
    const int64_t tasks = (int64_t{images} * a.tilesPerImage + kTilesPerTask - 1) / kTilesPerTask * a.nChunks;
    const int64_t rounds = (tasks + kSharedOperandWarpgroups - 1) / kSharedOperandWarpgroups;
    return double(tasks) / double(rounds * kSharedOperandWarpgroups);
  };
  int images = 1;
  for (int more = 2; more <= busyImages && sharedBytes(more) <= sharedLimit; ++more)
    if (fullness(more) >= fullness(images) - 1e-9) images = more;
  a.imagesPerStep = images;
  a.numSteps = (p.batch + images - 1) / images;
  a.rawFloats = roundUp(images * a.imageFloats, 4);
  plan.threads = 32 * kMaxWarps;
  plan.sharedBytes = sharedBytes(images);
  plan.fits = true;
  return plan;
}

// The launch the path would make for `p` on this machine, for the mapping view; false when it is
// not chosen or `p` does not fit it.
inline bool sharedOperandsGeometry(const ConvProblem& p, const std::string& kernel, KernelLaunchGeometry& g) {
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) return false;
  const direct_conv::DirectConvLimits limits = direct_conv::directConvLimits();
  const SharedOperandPlan plan = planSharedOperands(p, nullptr, false, limits.sharedOptin, limits.multiprocessors);
  const OperandLayout& l = plan.args.layout;
  if (!plan.fits || !sharedOperandsTake(gpu.computeMajor, gpu.computeMinor, l)) return false;
  g = KernelLaunchGeometry{};
  g.kernel = kernel;
  g.gridX = plan.args.numSteps;
  g.blockX = plan.threads;
  g.tileHeight = kTileSide;
  g.tileWidth = kTileSide;
  g.sharedBytes = static_cast<int64_t>(plan.sharedBytes);
  g.mapping = "persistent grid: blocks take steps of " + std::to_string(plan.args.imagesPerStep) +
              " image(s), staged once in shared memory as 16-byte entries (" +
              (l.packing == EntryPacking::kChannelQuads ? "four channels of a pixel" : "four neighbouring pixels") +
              "), with all weights; each warpgroup (four warps) computes 8 x 8 output pixels x up to 32 maps, " +
              std::to_string(l.kSteps) +
              " wgmma m64nNk8 in a row that read both operands from shared memory by descriptor (no loads into "
              "registers; grid shown: " +
              std::to_string(plan.args.numSteps) + " steps)";
  return true;
}

using SharedOperandKernel = void (*)(SharedOperandArgs);
constexpr SharedOperandKernel kSharedOperandKernels[kMaxNTilesPerWarp] = {
    conv_shared_operands_tf32<1>, conv_shared_operands_tf32<2>, conv_shared_operands_tf32<3>,
    conv_shared_operands_tf32<4>};

// Runs the convolution on this path and returns true, or returns false when the path is not
// chosen or the problem does not fit it (the caller runs the register-A paths).
inline bool launchSharedOperands(const ConvLaunch& l, const ConvEpilogue& epilogue, const char* name) {
  requireValidLaunch(l, name);
  direct_conv::DirectConvDeviceState& device = direct_conv::deviceState(l.context, name);
  if (device.computeMajor != 9 || (epilogue.hasPool && !isWholeTwoByTwoPool(l.problem, epilogue.pool))) return false;
  SharedOperandPlan plan =
      planSharedOperands(l.problem, l.input, epilogue.hasPool, device.sharedOptin, device.multiprocessors);
  if (!plan.fits || !sharedOperandsTake(device.computeMajor, device.computeMinor, plan.args.layout)) return false;
  SharedOperandArgs& a = plan.args;
  a.epilogue = fusedEpilogueOf(epilogue);
  a.input = l.input;
  a.weights = l.weights;
  a.output = l.output;
  const SharedOperandKernel kernel = kSharedOperandKernels[plan.nTilesPerTask - 1];
  const int blocks = direct_conv::residentBlocks(device, kernel, plan.threads, plan.sharedBytes);
  if (blocks <= 0) return false;
  const int grid = std::min(a.numSteps, blocks * device.multiprocessors);
  TracedScope scope(l.context, "conv_shared_operands_tf32");  // the kernel that runs, not the variant's
  kernel<<<grid, plan.threads, plan.sharedBytes, l.context.stream()>>>(a);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
  countTensorCoreLaunch(TensorCorePath::kWgmmaSharedOperands);
  return true;
}

}  // namespace convscope::gpu::implicit_gemm
