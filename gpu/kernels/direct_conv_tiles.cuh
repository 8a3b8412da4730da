// The machinery shared by the two direct-convolution variants (07_per_layer.cu and
// 08_restrict_unroll.cu): a persistent block keeps every weight in shared memory, laid out so a
// thread's group of output maps is contiguous (float4, warp-broadcast), and streams groups of
// whole images through two shared-memory buffers with asynchronous copies, so the next group
// loads while this one is computed. Each thread owns a register tile of R output rows (one
// column) x MT output maps; consecutive threads take consecutive output columns, so every global
// store of a warp is one contiguous run and the warp's shared-memory reads of the input are
// (nearly) conflict-free. Without padding, images are staged exactly as they lie in global
// memory (16-byte copies). The variants differ only in the Tile that accumulates one register
// tile (see runDirectConv). (Tried and dropped, slower on an H100: staging images transposed so
// a thread's column is contiguous; letting a thread take several images between two barriers.)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "app/core/device/gpu_platform.h"
#include "app/core/util/checked_math.h"
#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu::direct_conv {

// Everything a kernel needs, by value: the problem plus the tiling and shared-memory layout that
// the host plan chose. Sizes of shared-memory regions are in floats.
struct DirectConvArgs {
  const float* input;
  const float* weights;
  float* output;
  ConvShape shape;
  int rowTiles;       // ceil(outHeight / R)
  int mapGroups;      // ceil(outChannels / MT); weights of maps past outChannels are zero
  int itemsPerStep;   // register tiles of the images of one step: one a thread where possible
  int imagesPerStep;  // images staged and computed together
  int numSteps;       // ceil(batch / imagesPerStep)
  int weightFloats;   // inChannels * mapGroups * KH * KW * MT
  int rowPitch;       // staged input: floats between rows
  int planeStride;    // staged input: floats between channel planes
  int imageStride;    // staged input: floats between images (inChannels * planeStride)
  int bufferFloats;   // one staging buffer, a multiple of 4
  int flatCopy;       // row-major without padding: staged exactly as the images lie in memory
  int vectorCopy;     // flatCopy in 16-byte pieces (16-byte aligned images)
};

// ---------------------------------------------------------------------------------------------
// Asynchronous global -> shared copies (cp.async, sm_80+). On older GPUs they are plain loads and
// stores, so staging is synchronous there but still correct.

__device__ __forceinline__ void copyAsync4(float* sharedDst, const float* globalSrc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(sharedDst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(__cvta_generic_to_global(globalSrc))
               : "memory");
#else
  *sharedDst = __ldg(globalSrc);
#endif
}

__device__ __forceinline__ void copyAsync16(float* sharedDst, const float* globalSrc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(sharedDst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(__cvta_generic_to_global(globalSrc))
               : "memory");
#else
  *reinterpret_cast<float4*>(sharedDst) = __ldg(reinterpret_cast<const float4*>(globalSrc));
#endif
}

__device__ __forceinline__ void commitCopies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most the most recently committed group of this thread is still in flight.
__device__ __forceinline__ void waitForAllButNewestCopies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------------------------------------
// Staging.

// Weights [m][c][kh][kw] -> shared [c][group][kh][kw][MT], maps past outChannels zero, so that a
// thread's MT weights for one tap are one aligned run of floats (float4 loads, same address
// across the warp) and the offsets within a channel are compile-time multiples of MT.
template <int MT>
__device__ __forceinline__ void stageWeights(const DirectConvArgs& a, float* sharedWeights) {
  const int taps = a.shape.kernelHeight * a.shape.kernelWidth;
  for (int i = threadIdx.x; i < a.weightFloats; i += blockDim.x) {
    const int lane = i % MT;
    int rest = i / MT;
    const int tap = rest % taps;
    rest /= taps;
    const int group = rest % a.mapGroups;
    const int c = rest / a.mapGroups;
    const int m = group * MT + lane;
    sharedWeights[i] =
        m < a.shape.outChannels ? a.weights[(static_cast<int64_t>(m) * a.shape.inChannels + c) * taps + tap] : 0.0f;
  }
}

// Issues the copies of step `step`'s images into `buffer`: input (c, y, x) goes to plane c at
// (y + padTop) * rowPitch + x + padLeft. The padding halo and the slack rows were zeroed once and
// are never written. Images past the batch are not loaded; their tiles are skipped.
__device__ __forceinline__ void stageImages(const DirectConvArgs& a, int step, float* buffer) {
  const int first = step * a.imagesPerStep;
  const int count = min(a.imagesPerStep, a.shape.batch - first);
  const int imageFloats = a.shape.inChannels * a.shape.inHeight * a.shape.inWidth;
  const float* source = a.input + static_cast<int64_t>(first) * imageFloats;
  if (a.vectorCopy) {
    for (int i = 4 * threadIdx.x; i < count * imageFloats; i += 4 * blockDim.x) copyAsync16(buffer + i, source + i);
    return;
  }
  if (a.flatCopy) {
    for (int i = threadIdx.x; i < count * imageFloats; i += blockDim.x) copyAsync4(buffer + i, source + i);
    return;
  }
  // Padded: whole rows per warp, lanes along x. (plane, y) of `row` are kept up to date without
  // dividing in the loop.
  const int rows = count * a.shape.inChannels * a.shape.inHeight;
  const int warps = blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  int row = threadIdx.x / 32;
  int plane = row / a.shape.inHeight;
  int y = row - plane * a.shape.inHeight;
  for (; row < rows; row += warps) {
    const float* src = source + static_cast<int64_t>(row) * a.shape.inWidth;
    float* dst = buffer + plane * a.planeStride + (y + a.shape.padTop) * a.rowPitch + a.shape.padLeft;
    for (int x = lane; x < a.shape.inWidth; x += 32) copyAsync4(dst + x, src + x);
    y += warps;
    while (y >= a.shape.inHeight) {
      y -= a.shape.inHeight;
      ++plane;
    }
  }
}

// Where one register tile lies: image slot in the step, map group, first output row, column.
struct TileCoord {
  int image, group, row0, column;
};

// Consecutive items are consecutive output columns, then row tiles, map groups, images.
__device__ __forceinline__ TileCoord tileOf(const DirectConvArgs& a, int item, int rowsPerTile) {
  TileCoord t;
  t.column = item % a.shape.outWidth;
  int rest = item / a.shape.outWidth;
  t.row0 = (rest % a.rowTiles) * rowsPerTile;
  rest /= a.rowTiles;
  t.group = rest % a.mapGroups;
  t.image = rest / a.mapGroups;
  return t;
}

// The persistent loop. Tile supplies kRows, kMaps and
//   static void accumulate(const DirectConvArgs&, const float* input, const float* weights,
//                          float (&acc)[kRows][kMaps]);
// where `input` is the staged image at (channel 0, first input row of the tile, first input
// column of the tile) and `weights` the staged weights at (channel 0, the tile's map group).
template <class Tile>
__device__ __forceinline__ void runDirectConv(const DirectConvArgs& a) {
  constexpr int R = Tile::kRows;
  constexpr int MT = Tile::kMaps;
  static_assert(R >= 1 && MT >= 4 && MT % 4 == 0, "tiles hold whole float4 groups of maps");

  extern __shared__ float4 sharedStorage[];
  float* const sharedWeights = reinterpret_cast<float*>(sharedStorage);
  float* const buffer0 = sharedWeights + a.weightFloats;
  float* const buffer1 = buffer0 + a.bufferFloats;

  // Zero both buffers once: the padding halo and the slack rows stay zero.
  for (int i = threadIdx.x; i < 2 * a.bufferFloats; i += blockDim.x) buffer0[i] = 0.0f;
  stageWeights<MT>(a, sharedWeights);
  __syncthreads();

  const int firstItem = threadIdx.x;
  const TileCoord mine = tileOf(a, firstItem, R);
  const int outPlane = a.shape.outHeight * a.shape.outWidth;

  int step = blockIdx.x;
  if (step < a.numSteps) stageImages(a, step, buffer0);
  commitCopies();
  for (int iteration = 0; step < a.numSteps; ++iteration, step += gridDim.x) {
    const bool odd = iteration & 1;
    const float* current = odd ? buffer1 : buffer0;
    if (step + static_cast<int>(gridDim.x) < a.numSteps) stageImages(a, step + gridDim.x, odd ? buffer0 : buffer1);
    commitCopies();
    waitForAllButNewestCopies();
    __syncthreads();

    for (int item = firstItem; item < a.itemsPerStep; item += blockDim.x) {
      const TileCoord t = item == firstItem ? mine : tileOf(a, item, R);
      const int n = step * a.imagesPerStep + t.image;
      if (n >= a.shape.batch) continue;
      const float* input = current + t.image * a.imageStride + t.row0 * a.shape.strideHeight * a.rowPitch +
                           t.column * a.shape.strideWidth;
      const float* weights = sharedWeights + t.group * a.shape.kernelHeight * a.shape.kernelWidth * MT;
      float acc[R][MT];
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < MT; ++j) acc[r][j] = 0.0f;
      Tile::accumulate(a, input, weights, acc);

      // Consecutive threads write consecutive columns of the same row and map.
      const int map0 = t.group * MT;
      float* out = a.output + (static_cast<int64_t>(n) * a.shape.outChannels + map0) * outPlane +
                   t.row0 * a.shape.outWidth + t.column;
      if (map0 + MT <= a.shape.outChannels && t.row0 + R <= a.shape.outHeight) {
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
          for (int r = 0; r < R; ++r) out[j * outPlane + r * a.shape.outWidth] = acc[r][j];
      } else {
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
          for (int r = 0; r < R; ++r)
            if (map0 + j < a.shape.outChannels && t.row0 + r < a.shape.outHeight)
              out[j * outPlane + r * a.shape.outWidth] = acc[r][j];
      }
    }
    __syncthreads();  // everyone is done with `current` before the next iteration refills it
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.

// Per-context facts about the device, and the kernels whose shared-memory limit was raised.
struct DirectConvDeviceState {
  int device = -1;
  int multiprocessors = 0;
  size_t sharedOptin = 0;  // bytes one block may have after cudaFuncSetAttribute
  int computeMajor = 0, computeMinor = 0;
  std::map<std::tuple<const void*, int, size_t>, int> blocksPerSm;
};

struct DirectConvPlan {
  bool fits = false;
  DirectConvArgs args{};
  int threads = 0;
  size_t sharedBytes = 0;
};

// Tensors larger than this (floats) are declined before any plan arithmetic, which is in int: far
// beyond any shared memory, and small enough that no product on the way to that check overflows.
constexpr int64_t kMaxPlannedElements = int64_t{1} << 24;

// The register tiles of both variants, chosen per layer shape.
enum class TileShape {
  kSmall,  // 7 rows x 4 maps, 768 threads: 1-channel layers (output-bound) and layers of <= 4 maps
  kTall,   // 15 rows x 4 maps, 384 threads: multi-channel layers, tall outputs or map counts of 4k
  kWide,   // 5 rows x 12 maps, 384 threads: multi-channel layers, short outputs or map counts of 12k
};

inline TileShape chooseTile(const ConvProblem& p) {
  if (p.inChannels == 1 || p.outChannels <= 4) return TileShape::kSmall;
  // The multi-channel tile that computes fewer outputs nobody asked for (rows past outHeight,
  // maps past outChannels); ties go to the tall tile, the faster of the two for the course's
  // second layer (15 x 15 outputs, 24 maps: 1.45 vs 1.51 ms on an H100).
  auto padded = [&](int rows, int maps) {
    return int64_t{(p.outHeight() + rows - 1) / rows * rows} * ((p.outChannels + maps - 1) / maps * maps);
  };
  return padded(15, 4) <= padded(5, 12) ? TileShape::kTall : TileShape::kWide;
}

// Chooses how many images a block stages at once (one register tile per thread where possible,
// with as few idle threads as possible) and lays out shared memory. `fits` is false when one
// image and the weights don't fit in `sharedLimit` bytes.
// `input` only decides whether the staging copy may use 16-byte loads (nullptr: as if aligned);
// the launcher fills in the pointers.
inline DirectConvPlan planDirectConv(const ConvProblem& p, const float* input, int rows, int maps, int maxThreads,
                                     size_t sharedLimit, int multiprocessors) {
  DirectConvPlan plan;
  DirectConvArgs& a = plan.args;
  a.shape = shapeOf(p);
  if (a.shape.outHeight <= 0 || a.shape.outWidth <= 0 || p.batch <= 0) return plan;

  // Everything below stays far inside int once the shared-memory check passes; reject early
  // what could overflow on the way there.
  const int64_t imageFloats64 =
      int64_t{p.inChannels} *
      (int64_t{p.inHeight} + p.padTop + p.padBottom + p.kernelHeight + int64_t{rows + 1} * p.strideHeight) *
      (int64_t{p.inWidth} + p.padLeft + p.padRight);
  if (imageFloats64 > kMaxPlannedElements || p.weightElements() > kMaxPlannedElements) return plan;

  a.rowTiles = (a.shape.outHeight + rows - 1) / rows;
  a.mapGroups = (a.shape.outChannels + maps - 1) / maps;
  a.weightFloats = p.inChannels * a.mapGroups * p.kernelHeight * p.kernelWidth * maps;
  // Rows staged: the padded image, and the rows a last, partial row tile reads (their results
  // are dropped).
  const int rowsRead = (a.rowTiles * rows - 1) * p.strideHeight + p.kernelHeight;
  const int paddedHeight = p.inHeight + p.padTop + p.padBottom;
  int slack = 0;
  a.flatCopy = !p.hasPadding();
  if (a.flatCopy) {
    // Rows past the image that a partial row tile reads fall in the next plane (or this slack).
    a.rowPitch = p.inWidth;
    a.planeStride = p.inHeight * p.inWidth;
    slack = std::max(0, rowsRead - p.inHeight) * p.inWidth;
  } else {
    a.rowPitch = p.inWidth + p.padLeft + p.padRight;
    a.planeStride = std::max(rowsRead, paddedHeight) * a.rowPitch;
  }
  a.imageStride = p.inChannels * a.planeStride;
  a.vectorCopy =
      a.flatCopy && (p.inChannels * p.inHeight * p.inWidth) % 4 == 0 && reinterpret_cast<uintptr_t>(input) % 16 == 0;

  const int itemsPerImage = a.rowTiles * a.shape.outWidth * a.mapGroups;
  auto bufferFloats = [&](int images) { return roundUp(images * a.imageStride + slack, 4); };
  auto sharedBytes = [&](int images) {
    return (static_cast<size_t>(a.weightFloats) + 2 * static_cast<size_t>(bufferFloats(images))) * sizeof(float);
  };
  if (sharedBytes(1) > sharedLimit) return plan;

  // Images per step: a block's warps are spread over the multiprocessor's four schedulers and
  // all wait for the last at the end of a step, so score the tiles of a step against
  // 4 * ceil(warps / 4) warps (17 warps keep one scheduler busy with 5 while three idle after 4).
  // No more images than keep every multiprocessor busy on a small batch.
  const int busyImages = std::max(1, (p.batch + multiprocessors - 1) / multiprocessors);
  auto score = [&](int images) {
    const int items = images * itemsPerImage;
    const int warps = (std::min(items, maxThreads) + 31) / 32;
    const int passes = (items + maxThreads - 1) / maxThreads;
    return double(items) / (double(passes) * 128 * ((warps + 3) / 4));
  };
  int images = 1;
  double bestScore = score(1);
  for (int more = 2; more <= busyImages && more * itemsPerImage <= maxThreads; ++more) {
    if (sharedBytes(more) > sharedLimit) break;
    if (score(more) >= bestScore - 1e-9) {  // ties: more warps to hide latency
      bestScore = score(more);
      images = more;
    }
  }
  a.imagesPerStep = images;
  a.itemsPerStep = images * itemsPerImage;
  a.numSteps = (p.batch + images - 1) / images;
  a.bufferFloats = bufferFloats(images);
  plan.threads = std::min(maxThreads, roundUp(a.itemsPerStep, 32));
  plan.sharedBytes = sharedBytes(images);
  plan.fits = true;
  return plan;
}

inline DirectConvDeviceState& deviceState(GpuContext& context, const char* key) {
  DirectConvDeviceState& s = context.state<DirectConvDeviceState>(key);
  if (s.device < 0) {
    int device = 0;
    CONVSCOPE_CUDA_CHECK(cudaGetDevice(&device));
    int multiprocessors = 0;
    int optin = 0;
    CONVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    CONVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    CONVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&s.computeMajor, cudaDevAttrComputeCapabilityMajor, device));
    CONVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&s.computeMinor, cudaDevAttrComputeCapabilityMinor, device));
    s.multiprocessors = multiprocessors;
    s.sharedOptin = static_cast<size_t>(optin);
    s.device = device;
  }
  return s;
}

// Resident blocks of `kernel` per multiprocessor at this size, 0 when it cannot launch at all.
// The first query of a kernel also raises its dynamic shared-memory limit to the device's.
template <class Kernel>
int residentBlocks(DirectConvDeviceState& s, Kernel kernel, int threads, size_t sharedBytes) {
  const void* key = reinterpret_cast<const void*>(kernel);
  const auto found = s.blocksPerSm.find({key, threads, sharedBytes});
  if (found != s.blocksPerSm.end()) return found->second;
  bool raised = false;
  for (const auto& entry : s.blocksPerSm) raised = raised || std::get<0>(entry.first) == key;
  if (!raised)
    CONVSCOPE_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(s.sharedOptin)));
  int blocks = 0;
  CONVSCOPE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, sharedBytes));
  s.blocksPerSm[{key, threads, sharedBytes}] = blocks;
  return blocks;
}

// The shared memory and multiprocessors a plan is made for: this machine's GPU, or -- where there
// is none (shape checks and launch geometry on a machine without a GPU) -- an H100's (SXM).
constexpr size_t kH100SharedBytesPerBlockOptin = 227 * 1024;
constexpr int kH100Multiprocessors = 132;

struct DirectConvLimits {
  size_t sharedOptin = 0;
  int multiprocessors = 0;
  bool reference = false;  // the H100's figures, not this machine's
};

inline DirectConvLimits directConvLimits() {
  const GpuInfo& gpu = gpuInfo();
  if (gpu.usable) return {static_cast<size_t>(gpu.sharedBytesPerBlockOptin), gpu.multiprocessors, false};
  return {kH100SharedBytesPerBlockOptin, kH100Multiprocessors, true};
}

// One of the per-layer register tiles with its kernel: `rows` output rows x `maps` maps a thread.
struct TileKernel {
  std::string name;  // as the trace and the mapping view show it
  int rows = 0, maps = 0, maxThreads = 0;
};

// Why the tile cannot take `p` (one image and the weights exceed shared memory), or "".
inline std::string tileUnsupportedReason(const ConvProblem& p, const TileKernel& tile) {
  const DirectConvLimits limits = directConvLimits();
  if (planDirectConv(p, nullptr, tile.rows, tile.maps, tile.maxThreads, limits.sharedOptin, limits.multiprocessors)
          .fits)
    return {};
  return "one image and the weights do not fit in the " + std::to_string(limits.sharedOptin / 1024) +
         " KB of shared memory a block can have" + (limits.reference ? " (an H100's)" : "");
}

inline KernelLaunchGeometry tileGeometry(const ConvProblem& p, const TileKernel& tile) {
  const DirectConvLimits limits = directConvLimits();
  const DirectConvPlan plan =
      planDirectConv(p, nullptr, tile.rows, tile.maps, tile.maxThreads, limits.sharedOptin, limits.multiprocessors);
  KernelLaunchGeometry g;
  g.kernel = tile.name;
  g.gridX = plan.args.numSteps;
  g.blockX = plan.threads;
  g.tileHeight = tile.rows;
  g.tileWidth = 1;
  g.sharedBytes = static_cast<int64_t>(plan.sharedBytes);
  g.mapping = "persistent grid: at most as many blocks as fit on the GPU at once, each taking the next step of " +
              std::to_string(plan.args.imagesPerStep) +
              " image(s); a block stages the images and all weights in "
              "shared memory, and each thread computes " +
              std::to_string(tile.rows) + " output rows x " + std::to_string(tile.maps) +
              " maps of one column in registers (grid shown: " + std::to_string(plan.args.numSteps) + " steps)";
  return g;
}

// Plans and launches `kernel` (a __global__ taking DirectConvArgs whose body is
// runDirectConv<Tile>) as a persistent grid. Throws, launching nothing, when the shape does not
// fit (the row's unsupportedReason declines such shapes first, so the plan never hands it one).
template <class Kernel>
void launchDirectConv(const ConvLaunch& l, DirectConvDeviceState& s, Kernel kernel, const TileKernel& tile) {
  // Declined by every GPU row (gpu_variants.cpp): these kernels index weights by every channel.
  if (l.problem.isGrouped() || l.problem.hasDilation())
    throw Error(tile.name + ": grouped or dilated convolution (" + l.problem.describe() + ") is not computed here");
  DirectConvPlan plan =
      planDirectConv(l.problem, l.input, tile.rows, tile.maps, tile.maxThreads, s.sharedOptin, s.multiprocessors);
  // The variant's unsupportedReason declined such shapes, so the plan gave them to another variant.
  if (!plan.fits) throw Error(tile.name + ": " + l.problem.describe() + " does not fit in shared memory");
  plan.args.input = l.input;
  plan.args.weights = l.weights;
  plan.args.output = l.output;
  const int blocks = residentBlocks(s, kernel, plan.threads, plan.sharedBytes);
  if (blocks <= 0) throw Error(tile.name + ": no block of it fits on a multiprocessor for " + l.problem.describe());
  const int grid = std::min(plan.args.numSteps, blocks * s.multiprocessors);
  TracedScope scope(l.context, tile.name.c_str());
  kernel<<<grid, plan.threads, plan.sharedBytes, l.context.stream()>>>(plan.args);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace convscope::gpu::direct_conv
