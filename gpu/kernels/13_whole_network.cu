// Beyond the course, step 13, the whole network in one kernel: from the 8-bit images as the data
// set stores them (resized as they are read, with the host's arithmetic) or the float batch, through
// every convolution with its bias, activation and pooling, the flatten, every fully connected layer
// and the softmax, to the probabilities. Every other step launches a dozen kernels that write and
// re-read each layer's output; this one runs the network in one kernel. It has two paths, chosen
// on the host by the batch size, because one mapping cannot both fill the GPU with a few images
// and reuse data with many:
//
// Large batches, the per-image-block path (wholeNetworkKernel): between layers nothing reaches
// global memory: a block keeps each image's maps in shared memory, with the conv weights, and
// takes a few images in turn so that the fully connected layers, whose weights are read from L2,
// read them once per few images. One block per kImagesPerBlock images. Conv layer: a thread
// computes kChannelsPerThread output channels at one pooled position, every conv value of its
// pooling window at once, so each input value read from shared memory feeds 4 multiply-adds and
// each 16-byte weight load up to 16; a window inside the input skips the padding checks. Fully
// connected layer: a warp per output neuron, its lanes splitting the inputs (coalesced weight
// rows), for all the block's images at once, then a shuffle reduction. Its conv weights are
// packed for it by a small kernel before every launch (so a recorded graph replays that too).
//
// Small batches, the grid-wide path (wholeNetworkGridKernel): with fewer blocks of images than the
// GPU has multiprocessors, the path above leaves most of the GPU idle (batch 1 runs on one of
// 132 SMs). Here every block of one cooperative launch, as many as fit on the GPU at once, works
// on every stage, and the grid waits for itself between stages (cooperative_groups grid sync):
// the input into a global scratch buffer; each conv layer as items (image, 4 output channels,
// pooled position), each taken by a group of 1-32 lanes of a warp that split the layer's taps
// (input channel x kernel row x kernel column) and sum their pooling window's conv values with a
// shuffle reduction, the group's first lane adding the bias, activation and pooling; each fully
// connected layer a warp per (output neuron, 4 images), the lanes splitting a weight row; the
// softmax a warp per image, which also computes the last layer when its outputs fit in a warp's
// lanes (one grid sync fewer). The group size per conv layer is chosen on the host so that items x
// lanes fill the GPU twice over. The maps live in two L2-resident scratch buffers; the first stage
// also packs the conv weights as the other path does, so nothing else is launched.
#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "app/core/device/gpu_platform.h"
#include "app/core/engine/chain_network.h"
#include "app/core/util/error.h"
#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_context.h"
#include "gpu/gpu_kernel.h"
#include "gpu/kernels/epilogue.cuh"
#include "gpu/resize_bytes.cuh"

namespace convscope::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kImagesPerBlock = 4;
constexpr int kChannelsPerThread = 4;
constexpr int kMaxConvs = 4;
constexpr int kMaxDense = 4;
constexpr int kMaxPoolWindow = 2;  // pooling windows up to 2x2: the conv values a thread holds
static_assert(kThreads % 32 == 0 && kImagesPerBlock <= kThreads / 32, "one warp per image for the softmax");

struct ConvArgs {
  int inChannels, inHeight, inWidth, outChannels;
  int kernelHeight, kernelWidth, strideHeight, strideWidth, padTop, padLeft;
  FusedActivation activation;
  FusedPooling pooling;
  int poolHeight, poolWidth, poolStrideHeight, poolStrideWidth;  // 1, 1, 1, 1 without a pooling
  int outHeight, outWidth;                                       // after the pooling
  const float* bias;                                             // nullptr: none
  int weightOffset;                                              // of its weights in shared memory, floats
  // The grid-wide path: the weights as the model stores them, [outChannel][inChannel][ky][kx]
  // (its first stage packs them), and the lanes (a power of two up to 32) that split one item's
  // taps.
  const float* weights;
  int lanes;
};

struct DenseArgs {
  int inputs, outputs;
  bool transposed;  // weights [outputs][inputs]
  FusedActivation activation;
  const float* weights;
  const float* bias;
};

struct NetworkArgs {
  int images;
  const float* input;  // or, when null, the bytes
  const uint8_t* bytes;
  int byteHeight, byteWidth;
  const BilinearTap* rowTaps;
  const BilinearTap* colTaps;
  int inputHeight, inputWidth;
  int convCount, denseCount;
  ConvArgs conv[kMaxConvs];
  DenseArgs dense[kMaxDense];
  bool softmax;
  float* output;  // images x classes
  // Shared memory, in floats: the conv weights, two map buffers (the first holds the input and
  // the outputs of conv layers 2, 4..., the second those of layers 1, 3...), the features of the
  // block's images (the last conv's output, flattened) and two fully connected buffers.
  int weightFloats, mapFloats[2], featureFloats, denseFloats;
  // The grid-wide path's two global scratch buffers, each `scratchFloats` per image (the largest
  // of the input, every conv layer's output and every fully connected layer's): a stage reads one
  // and writes the other.
  float* scratch0;
  float* scratch1;
  int scratchFloats;
  float* packedWeights;  // weightFloats, 16-byte aligned: the conv weights as the first stage packs them
};

// A conv layer's weights as the kernel keeps them: tap-major, [inChannel][ky][kx][outChannel]
// with the channels padded to a multiple of kChannelsPerThread (zeros), so a thread's channels at
// one tap are one aligned 16-byte load, the same for the whole warp (a broadcast).
__host__ __device__ inline int paddedChannels(int channels) {
  return (channels + kChannelsPerThread - 1) / kChannelsPerThread * kChannelsPerThread;
}

__global__ void packConvWeightsKernel(const float* __restrict__ weights, int outChannels, int taps,
                                      float* __restrict__ packed) {
  const int padded = paddedChannels(outChannels);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < taps * padded; i += gridDim.x * blockDim.x) {
    const int tap = i / padded, channel = i % padded;
    packed[i] = channel < outChannels ? weights[channel * taps + tap] : 0.0f;
  }
}

// The conv values of one thread's pooling window (kPoolH x kPoolW conv positions) for its
// kChannelsPerThread channels. kChecked: some tap of the window falls in the padding.
template <int kPoolH, int kPoolW, bool kChecked>
__device__ void convWindow(const ConvArgs& c, const float* __restrict__ in, const float* __restrict__ weights,
                           int firstChannel, int py, int px, float (&acc)[kMaxPoolWindow][kMaxPoolWindow][4]) {
  const int padded = paddedChannels(c.outChannels);
  const int top = py * c.poolStrideHeight * c.strideHeight - c.padTop;
  const int left = px * c.poolStrideWidth * c.strideWidth - c.padLeft;
  const int plane = c.inHeight * c.inWidth;
  for (int ic = 0; ic < c.inChannels; ++ic) {
    const float* source = in + ic * plane;
    const float* w = weights + ic * c.kernelHeight * c.kernelWidth * padded + firstChannel;
    for (int ky = 0; ky < c.kernelHeight; ++ky)
      for (int kx = 0; kx < c.kernelWidth; ++kx, w += padded) {
        const float4 w4 = *reinterpret_cast<const float4*>(w);
#pragma unroll
        for (int wy = 0; wy < kPoolH; ++wy)
#pragma unroll
          for (int wx = 0; wx < kPoolW; ++wx) {
            const int iy = top + wy * c.strideHeight + ky;
            const int ix = left + wx * c.strideWidth + kx;
            float v;
            if (kChecked)
              v = iy >= 0 && iy < c.inHeight && ix >= 0 && ix < c.inWidth ? source[iy * c.inWidth + ix] : 0.0f;
            else
              v = source[iy * c.inWidth + ix];
            acc[wy][wx][0] += v * w4.x;
            acc[wy][wx][1] += v * w4.y;
            acc[wy][wx][2] += v * w4.z;
            acc[wy][wx][3] += v * w4.w;
          }
      }
  }
}

// One output of a pooling window from its conv sums for channel slot k: the bias, the activation
// at every position, then the maximum or the mean. Both paths' sums (block and grid) come here.
template <int kPoolH, int kPoolW, int kRows, int kColumns>
__device__ __forceinline__ float finishWindow(const ConvArgs& c, const float (&acc)[kRows][kColumns][4], int k,
                                              float bias) {
  static_assert(kPoolH <= kRows && kPoolW <= kColumns, "the window's sums are all there");
  float pooled = c.pooling == FusedPooling::kMax ? -FLT_MAX : 0.0f;
#pragma unroll
  for (int wy = 0; wy < kPoolH; ++wy)
#pragma unroll
    for (int wx = 0; wx < kPoolW; ++wx) {
      const float v = activate(c.activation, acc[wy][wx][k] + bias);
      pooled = c.pooling == FusedPooling::kMax ? fmaxf(pooled, v) : pooled + v;
    }
  if (c.pooling == FusedPooling::kAverage) pooled /= static_cast<float>(kPoolH * kPoolW);
  return pooled;
}

// One conv layer of one image, shared memory to shared memory, with its epilogue.
template <int kPoolH, int kPoolW>
__device__ void convLayer(const ConvArgs& c, const float* __restrict__ in, const float* __restrict__ weights,
                          float* __restrict__ out) {
  static_assert(kChannelsPerThread == 4, "a thread's channels are one float4 of weights");
  const int groups = (c.outChannels + kChannelsPerThread - 1) / kChannelsPerThread;
  const int positions = c.outHeight * c.outWidth;
  for (int item = threadIdx.x; item < groups * positions; item += blockDim.x) {
    const int firstChannel = (item / positions) * kChannelsPerThread;
    const int py = (item % positions) / c.outWidth;
    const int px = item % c.outWidth;
    float acc[kMaxPoolWindow][kMaxPoolWindow][4] = {};
    // Whether the window's taps all fall inside the input (no padding to skip).
    const int top = py * c.poolStrideHeight * c.strideHeight - c.padTop;
    const int left = px * c.poolStrideWidth * c.strideWidth - c.padLeft;
    const bool inside = top >= 0 && left >= 0 && top + (kPoolH - 1) * c.strideHeight + c.kernelHeight <= c.inHeight &&
                        left + (kPoolW - 1) * c.strideWidth + c.kernelWidth <= c.inWidth;
    if (inside)
      convWindow<kPoolH, kPoolW, false>(c, in, weights, firstChannel, py, px, acc);
    else
      convWindow<kPoolH, kPoolW, true>(c, in, weights, firstChannel, py, px, acc);
#pragma unroll
    for (int k = 0; k < kChannelsPerThread; ++k) {
      const int channel = firstChannel + k;
      if (channel >= c.outChannels) break;
      out[(channel * c.outHeight + py) * c.outWidth + px] =
          finishWindow<kPoolH, kPoolW>(c, acc, k, c.bias ? c.bias[channel] : 0.0f);
    }
  }
}

__device__ void convLayerAnyWindow(const ConvArgs& c, const float* in, const float* weights, float* out) {
  if (c.poolHeight == 2 && c.poolWidth == 2)
    convLayer<2, 2>(c, in, weights, out);
  else if (c.poolHeight == 2)
    convLayer<2, 1>(c, in, weights, out);
  else if (c.poolWidth == 2)
    convLayer<1, 2>(c, in, weights, out);
  else
    convLayer<1, 1>(c, in, weights, out);
}

// One fully connected layer for the block's `count` images: a warp per output neuron.
__device__ void denseLayer(const DenseArgs& d, const float* __restrict__ in, int inStride, float* __restrict__ out,
                           int outStride, int count) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int o = warp; o < d.outputs; o += warps) {
    float acc[kImagesPerBlock] = {};
#pragma unroll 4
    for (int i = lane; i < d.inputs; i += 32) {
      const float w =
          d.transposed ? __ldg(d.weights + int64_t{o} * d.inputs + i) : __ldg(d.weights + int64_t{i} * d.outputs + o);
#pragma unroll
      for (int b = 0; b < kImagesPerBlock; ++b) acc[b] += w * in[b * inStride + i];
    }
#pragma unroll
    for (int b = 0; b < kImagesPerBlock; ++b)
      for (int offset = 16; offset > 0; offset /= 2) acc[b] += __shfl_xor_sync(0xffffffffu, acc[b], offset);
    if (lane == 0) {
      const float bias = d.bias ? __ldg(d.bias + o) : 0.0f;
      for (int b = 0; b < count; ++b) out[b * outStride + o] = activate(d.activation, acc[b] + bias);
    }
  }
}

// One image's scores out, through the softmax when the network has one; a whole warp calls it.
__device__ void writeScores(const float* scores, int classes, bool softmax, float* out) {
  const int lane = threadIdx.x % 32;
  if (!softmax) {
    for (int j = lane; j < classes; j += 32) out[j] = scores[j];
    return;
  }
  float peak = -INFINITY;
  for (int j = lane; j < classes; j += 32) peak = fmaxf(peak, scores[j]);
  for (int offset = 16; offset > 0; offset /= 2) peak = fmaxf(peak, __shfl_xor_sync(0xffffffffu, peak, offset));
  float sum = 0.0f;
  for (int j = lane; j < classes; j += 32) sum += expf(scores[j] - peak);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  for (int j = lane; j < classes; j += 32) out[j] = expf(scores[j] - peak) / sum;
}

__global__ void __launch_bounds__(kThreads) wholeNetworkKernel(NetworkArgs a, const float* __restrict__ convWeights) {
  extern __shared__ float4 sharedVectors[];  // 16-byte aligned: the weights are read as float4
  float* shared = reinterpret_cast<float*>(sharedVectors);
  float* weights = shared;
  // Buffers chosen by a select, not by indexing an array of pointers (which would live in local memory).
  float* const map0 = weights + a.weightFloats;
  float* const map1 = map0 + a.mapFloats[0];
  float* const features = map1 + a.mapFloats[1];
  float* const dense0 = features + kImagesPerBlock * a.featureFloats;
  float* const dense1 = dense0 + kImagesPerBlock * a.denseFloats;

  for (int i = threadIdx.x; i < a.weightFloats; i += blockDim.x) weights[i] = __ldg(convWeights + i);
  const int first = blockIdx.x * kImagesPerBlock;
  const int count = min(kImagesPerBlock, a.images - first);
  const int inputPlane = a.inputHeight * a.inputWidth;
  const bool sameSize = a.byteHeight == a.inputHeight && a.byteWidth == a.inputWidth;

  for (int b = 0; b < count; ++b) {
    const int64_t image = first + b;
    // The image as the model sees it, into the first map buffer.
    if (a.input) {
      for (int i = threadIdx.x; i < inputPlane; i += blockDim.x) map0[i] = __ldg(a.input + image * inputPlane + i);
    } else {
      const uint8_t* bytes = a.bytes + image * a.byteHeight * a.byteWidth;
      for (int i = threadIdx.x; i < inputPlane; i += blockDim.x)
        map0[i] =
            resizedBytePixel(bytes, a.byteWidth, a.rowTaps, a.colTaps, sameSize, i / a.inputWidth, i % a.inputWidth);
    }
    __syncthreads();  // the weights and the image are in place
    for (int l = 0; l < a.convCount; ++l) {
      float* out = l + 1 == a.convCount ? features + b * a.featureFloats : l % 2 == 0 ? map1 : map0;
      convLayerAnyWindow(a.conv[l], l % 2 == 0 ? map0 : map1, weights + a.conv[l].weightOffset, out);
      __syncthreads();
    }
  }

  const float* in = features;
  int inStride = a.featureFloats;
  for (int l = 0; l < a.denseCount; ++l) {
    float* out = l % 2 == 0 ? dense0 : dense1;
    denseLayer(a.dense[l], in, inStride, out, a.denseFloats, count);
    __syncthreads();
    in = out;
    inStride = a.denseFloats;
  }

  // The scores out, through the softmax: a warp per image.
  const int classes = a.dense[a.denseCount - 1].outputs;
  const int warp = threadIdx.x / 32;
  if (warp < count) writeScores(in + warp * inStride, classes, a.softmax, a.output + (int64_t{first} + warp) * classes);
}

// ---- The grid-wide path -------------------------------------------------------------------------
// Every stage is a loop over its items by the whole grid; the scratch maps are written by one
// stage and read by the next after a grid sync, so they are read with plain loads (never __ldg or
// __restrict__, whose non-coherent cache may hold what an earlier stage read there). The loops
// advance a whole warp at once, so that every lane of a warp reaches every shuffle. Indices are
// 32-bit (64-bit divisions cost registers and time): the host takes this path only where the
// images times scratchFloats, which bounds every stage's items and offsets, fit in an int.

// Large blocks: a grid sync costs an arrival per block, so few blocks that hold many threads. At
// 1,024 threads a thread may have 64 registers, and the conv stage's 16 sums then spill; at 768
// it has 80 (what ptxas takes for sm_90, no spills): one block per multiprocessor.
constexpr int kGridThreads = 768;

// One conv layer for every image: items (image, group of kChannelsPerThread output channels,
// pooled position), c.lanes lanes per item, each lane taking every c.lanes-th tap. A tap's
// weights for the item's channels are one 16-byte load from the packed weights (as the
// per-image-block path packs them, here packed by the kernel's first stage), and each input value
// feeds the item's kChannelsPerThread channels: loads, not multiply-adds, bound this stage at
// larger batches. in[image * stride + (inChannel * inHeight + y) * inWidth + x] to the same in `out`.
template <int kPoolH, int kPoolW>
__device__ void gridConvStage(const ConvArgs& c, const float* in, const float* packed, float* out, int stride,
                              int images, int warp, int warps) {
  static_assert(kChannelsPerThread == 4, "an item's channels are one float4 of weights");
  const int lane = threadIdx.x % 32;
  const int lanes = c.lanes;
  const int groupLane = lane & (lanes - 1);
  const int groupsPerWarp = 32 / lanes;
  const int padded = paddedChannels(c.outChannels);
  const int channelGroups = padded / kChannelsPerThread;
  const int positions = c.outHeight * c.outWidth;
  const int perImage = channelGroups * positions;
  const int items = images * perImage;
  const int kernelArea = c.kernelHeight * c.kernelWidth;
  const int taps = c.inChannels * kernelArea;
  const int plane = c.inHeight * c.inWidth;
  // `first` stays below items + 32 * warps: no overflow.
  for (int first = warp * groupsPerWarp; first < items; first += warps * groupsPerWarp) {
    const int item = first + lane / lanes;
    const bool valid = item < items;
    int image = 0, firstChannel = 0, py = 0, px = 0;
    float acc[kPoolH][kPoolW][kChannelsPerThread] = {};
    if (valid) {
      image = item / perImage;
      const int rest = item % perImage;
      firstChannel = rest / positions * kChannelsPerThread;
      py = rest % positions / c.outWidth;
      px = rest % c.outWidth;
      const float* source = in + image * stride;
      const int top = py * c.poolStrideHeight * c.strideHeight - c.padTop;
      const int left = px * c.poolStrideWidth * c.strideWidth - c.padLeft;
      for (int tap = groupLane; tap < taps; tap += lanes) {
        const int inChannel = tap / kernelArea;
        const int ky = tap % kernelArea / c.kernelWidth;
        const int kx = tap % c.kernelWidth;
        const float4 w4 = *reinterpret_cast<const float4*>(packed + tap * padded + firstChannel);
        const float* channelMap = source + inChannel * plane;
#pragma unroll
        for (int wy = 0; wy < kPoolH; ++wy)
#pragma unroll
          for (int wx = 0; wx < kPoolW; ++wx) {
            const int iy = top + wy * c.strideHeight + ky;
            const int ix = left + wx * c.strideWidth + kx;
            const float v =
                iy >= 0 && iy < c.inHeight && ix >= 0 && ix < c.inWidth ? channelMap[iy * c.inWidth + ix] : 0.0f;
            acc[wy][wx][0] += v * w4.x;
            acc[wy][wx][1] += v * w4.y;
            acc[wy][wx][2] += v * w4.z;
            acc[wy][wx][3] += v * w4.w;
          }
      }
    }
    // Every lane of the warp is here (an invalid item's lanes add zeros): the group's sums.
#pragma unroll
    for (int wy = 0; wy < kPoolH; ++wy)
#pragma unroll
      for (int wx = 0; wx < kPoolW; ++wx)
#pragma unroll
        for (int k = 0; k < kChannelsPerThread; ++k)
          for (int offset = lanes / 2; offset > 0; offset /= 2)
            acc[wy][wx][k] += __shfl_xor_sync(0xffffffffu, acc[wy][wx][k], offset);
    if (valid && groupLane == 0) {
#pragma unroll
      for (int k = 0; k < kChannelsPerThread; ++k) {
        const int channel = firstChannel + k;
        if (channel >= c.outChannels) break;
        out[image * stride + (channel * c.outHeight + py) * c.outWidth + px] =
            finishWindow<kPoolH, kPoolW>(c, acc, k, c.bias ? __ldg(c.bias + channel) : 0.0f);
      }
    }
  }
}

__device__ void gridConvStageAnyWindow(const ConvArgs& c, const float* in, const float* packed, float* out, int stride,
                                       int images, int warp, int warps) {
  if (c.poolHeight == 2 && c.poolWidth == 2)
    gridConvStage<2, 2>(c, in, packed, out, stride, images, warp, warps);
  else if (c.poolHeight == 2)
    gridConvStage<2, 1>(c, in, packed, out, stride, images, warp, warps);
  else if (c.poolWidth == 2)
    gridConvStage<1, 2>(c, in, packed, out, stride, images, warp, warps);
  else
    gridConvStage<1, 1>(c, in, packed, out, stride, images, warp, warps);
}

// One fully connected layer for every image: a warp per (output neuron, kDenseImagesPerWarp
// images), its lanes splitting the inputs (a coalesced weight row when the weights are
// [outputs][inputs]), each weight read once for the warp's images.
constexpr int kDenseImagesPerWarp = 4;
__device__ void gridDenseStage(const DenseArgs& d, const float* in, float* out, int stride, int images, int warp,
                               int warps) {
  const int lane = threadIdx.x % 32;
  const int imageGroups = (images + kDenseImagesPerWarp - 1) / kDenseImagesPerWarp;
  const int items = imageGroups * d.outputs;
  // Consecutive warps take consecutive neurons of the same images, whose inputs they share in L1.
  for (int item = warp; item < items; item += warps) {
    const int firstImage = item / d.outputs * kDenseImagesPerWarp;
    const int o = item % d.outputs;
    const int count = min(kDenseImagesPerWarp, images - firstImage);
    const float* x = in + firstImage * stride;
    float acc[kDenseImagesPerWarp] = {};
    for (int i = lane; i < d.inputs; i += 32) {
      const float w =
          d.transposed ? __ldg(d.weights + int64_t{o} * d.inputs + i) : __ldg(d.weights + int64_t{i} * d.outputs + o);
#pragma unroll
      for (int b = 0; b < kDenseImagesPerWarp; ++b)
        if (b < count) acc[b] += w * x[b * stride + i];
    }
#pragma unroll
    for (int b = 0; b < kDenseImagesPerWarp; ++b)
      for (int offset = 16; offset > 0; offset /= 2) acc[b] += __shfl_xor_sync(0xffffffffu, acc[b], offset);
    if (lane == 0) {
      const float bias = d.bias ? __ldg(d.bias + o) : 0.0f;
      for (int b = 0; b < count; ++b) out[(firstImage + b) * stride + o] = activate(d.activation, acc[b] + bias);
    }
  }
}

// The last fully connected layer and the scores out (through the softmax when the network has
// one) in one stage, a warp per image, when its outputs fit in a warp's lanes: no grid sync
// between them. Lane o keeps output o; the sums run in the same order as gridDenseStage's and
// writeScores', so the result is theirs.
__device__ void gridLastDenseAndScores(const DenseArgs& d, const float* in, int stride, int images, bool softmax,
                                       float* output, int warp, int warps) {
  const int lane = threadIdx.x % 32;
  for (int image = warp; image < images; image += warps) {
    const float* x = in + image * stride;
    float score = 0.0f;
    for (int o = 0; o < d.outputs; ++o) {
      float acc = 0.0f;
      for (int i = lane; i < d.inputs; i += 32) {
        const float w =
            d.transposed ? __ldg(d.weights + int64_t{o} * d.inputs + i) : __ldg(d.weights + int64_t{i} * d.outputs + o);
        acc += w * x[i];
      }
      for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
      if (lane == o) score = activate(d.activation, acc + (d.bias ? __ldg(d.bias + o) : 0.0f));
    }
    float* out = output + int64_t{image} * d.outputs;
    const bool mine = lane < d.outputs;
    if (!softmax) {
      if (mine) out[lane] = score;
      continue;
    }
    float peak = mine ? score : -INFINITY;
    for (int offset = 16; offset > 0; offset /= 2) peak = fmaxf(peak, __shfl_xor_sync(0xffffffffu, peak, offset));
    float sum = mine ? expf(score - peak) : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (mine) out[lane] = expf(score - peak) / sum;
  }
}

// Launched cooperatively with no more blocks than fit on the GPU at once: every thread of every
// block reaches every grid sync (no thread returns early).
__global__ void __launch_bounds__(kGridThreads) wholeNetworkGridKernel(NetworkArgs a) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  // The grid holds no more threads than the GPU at once: far below INT_MAX.
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const int threads = gridDim.x * blockDim.x;
  const int warp = thread / 32, warps = threads / 32;
  const int stride = a.scratchFloats;

  // Stage 0: every conv layer's weights packed as the conv stages read them (tap-major, the
  // channels padded to kChannelsPerThread with zeros, as packConvWeightsKernel packs them) ...
  for (int l = 0; l < a.convCount; ++l) {
    const ConvArgs& c = a.conv[l];
    const int padded = paddedChannels(c.outChannels);
    const int taps = c.inChannels * c.kernelHeight * c.kernelWidth;
    float* packed = a.packedWeights + c.weightOffset;
    for (int i = thread; i < taps * padded; i += threads) {
      const int tap = i / padded, channel = i % padded;
      packed[i] = channel < c.outChannels ? __ldg(c.weights + channel * taps + tap) : 0.0f;
    }
  }
  // ... and the images as the model sees them, into the first scratch buffer.
  const int inputPlane = a.inputHeight * a.inputWidth;
  const bool sameSize = a.byteHeight == a.inputHeight && a.byteWidth == a.inputWidth;
  for (int i = thread; i < a.images * inputPlane; i += threads) {
    const int image = i / inputPlane;
    const int pixel = i % inputPlane;
    a.scratch0[image * stride + pixel] =
        a.input ? __ldg(a.input + i)
                : resizedBytePixel(a.bytes + int64_t{image} * a.byteHeight * a.byteWidth, a.byteWidth, a.rowTaps,
                                   a.colTaps, sameSize, pixel / a.inputWidth, pixel % a.inputWidth);
  }
  grid.sync();

  // Buffers chosen by a select, not by indexing an array of pointers (which would live in local memory).
  bool inFirst = true;
  for (int l = 0; l < a.convCount; ++l) {
    gridConvStageAnyWindow(a.conv[l], inFirst ? a.scratch0 : a.scratch1, a.packedWeights + a.conv[l].weightOffset,
                           inFirst ? a.scratch1 : a.scratch0, stride, a.images, warp, warps);
    grid.sync();
    inFirst = !inFirst;
  }
  const DenseArgs& last = a.dense[a.denseCount - 1];
  const bool lastInWarp = last.outputs <= 32;  // the last layer and the scores out in one stage
  for (int l = 0; l < a.denseCount - (lastInWarp ? 1 : 0); ++l) {
    gridDenseStage(a.dense[l], inFirst ? a.scratch0 : a.scratch1, inFirst ? a.scratch1 : a.scratch0, stride, a.images,
                   warp, warps);
    grid.sync();
    inFirst = !inFirst;
  }

  // The scores out, through the softmax: a warp per image.
  const float* scores = inFirst ? a.scratch0 : a.scratch1;
  if (lastInWarp) {
    gridLastDenseAndScores(last, scores, stride, a.images, a.softmax, a.output, warp, warps);
  } else {
    for (int image = warp; image < a.images; image += warps)
      writeScores(scores + image * stride, last.outputs, a.softmax, a.output + int64_t{image} * last.outputs);
  }
}

// The kernel's arguments for `network`, less the run's pointers; empty `whyNot` when it takes it.
NetworkArgs argsOf(const ChainNetwork& network, std::string* whyNot) {
  NetworkArgs a{};
  const auto decline = [&](const std::string& reason) {
    if (whyNot->empty()) *whyNot = reason;
  };
  if (network.convs.size() > kMaxConvs)
    decline("it has " + std::to_string(network.convs.size()) + " conv layers; the kernel takes " +
            std::to_string(kMaxConvs));
  if (network.dense.size() > kMaxDense)
    decline("it has " + std::to_string(network.dense.size()) + " fully connected layers; the kernel takes " +
            std::to_string(kMaxDense));
  if (!whyNot->empty()) return a;
  a.inputHeight = network.inputHeight;
  a.inputWidth = network.inputWidth;
  a.convCount = static_cast<int>(network.convs.size());
  a.denseCount = static_cast<int>(network.dense.size());
  a.softmax = network.softmax;
  int64_t maps[2] = {int64_t{network.inputHeight} * network.inputWidth, 0};
  int64_t weights = 0;
  for (int l = 0; l < a.convCount; ++l) {
    const ChainConv& layer = network.convs[static_cast<size_t>(l)];
    const ConvProblem& p = layer.problem;
    ConvArgs& c = a.conv[l];
    c.inChannels = p.inChannels;
    c.inHeight = p.inHeight;
    c.inWidth = p.inWidth;
    c.outChannels = p.outChannels;
    c.kernelHeight = p.kernelHeight;
    c.kernelWidth = p.kernelWidth;
    c.strideHeight = p.strideHeight;
    c.strideWidth = p.strideWidth;
    c.padTop = p.padTop;
    c.padLeft = p.padLeft;
    const FusedEpilogue epilogue = fusedEpilogueOf(layer.epilogue);
    c.activation = epilogue.activation;
    c.pooling = epilogue.pooling;
    const PoolGeometry& pool = layer.epilogue.pool;
    c.poolHeight = layer.epilogue.hasPool ? pool.kernelHeight : 1;
    c.poolWidth = layer.epilogue.hasPool ? pool.kernelWidth : 1;
    c.poolStrideHeight = layer.epilogue.hasPool ? pool.strideHeight : 1;
    c.poolStrideWidth = layer.epilogue.hasPool ? pool.strideWidth : 1;
    c.outHeight = layer.pooledHeight;
    c.outWidth = layer.pooledWidth;
    c.weightOffset = static_cast<int>(weights);
    if (c.poolHeight > kMaxPoolWindow || c.poolWidth > kMaxPoolWindow)
      decline("conv layer " + std::to_string(l + 1) + " is pooled over " + std::to_string(c.poolHeight) + "x" +
              std::to_string(c.poolWidth) + "; the kernel pools windows up to 2x2");
    // Packed tap-major with padded channels; every layer starts 16-byte aligned.
    weights += int64_t{paddedChannels(p.outChannels)} * p.inChannels * p.kernelHeight * p.kernelWidth;
    const int64_t out = int64_t{p.outChannels} * c.outHeight * c.outWidth;
    if (l + 1 < a.convCount)
      maps[(l + 1) % 2] = std::max(maps[(l + 1) % 2], out);
    else
      a.featureFloats = static_cast<int>(out);
  }
  int64_t denseWidth = 0;
  for (int l = 0; l < a.denseCount; ++l) {
    const ChainDense& layer = network.dense[static_cast<size_t>(l)];
    DenseArgs& d = a.dense[l];
    d.inputs = static_cast<int>(layer.step.inputs);
    d.outputs = static_cast<int>(layer.step.outputs);
    d.transposed = layer.step.weightsTransposed;
    d.activation = fusedActivationOf(layer.hasActivation, layer.activation);
    denseWidth = std::max<int64_t>(denseWidth, layer.step.outputs);
  }
  a.weightFloats = static_cast<int>(weights);
  a.mapFloats[0] = static_cast<int>(maps[0]);
  a.mapFloats[1] = static_cast<int>(maps[1]);
  a.denseFloats = static_cast<int>(denseWidth);
  a.scratchFloats = static_cast<int>(std::max({maps[0], maps[1], int64_t{a.featureFloats}, denseWidth}));
  return a;
}

size_t sharedBytesOf(const NetworkArgs& a) {
  const int64_t floats = int64_t{a.weightFloats} + a.mapFloats[0] + a.mapFloats[1] +
                         int64_t{kImagesPerBlock} * a.featureFloats + 2 * int64_t{kImagesPerBlock} * a.denseFloats;
  return sizeof(float) * static_cast<size_t>(floats);
}

std::string declines(const ChainNetwork& network) {
  std::string whyNot;
  const NetworkArgs a = argsOf(network, &whyNot);
  if (!whyNot.empty()) return whyNot;
  const int64_t limit = gpuInfo().usable ? gpuInfo().sharedBytesPerBlockOptin : 0;
  if (limit > 0 && static_cast<int64_t>(sharedBytesOf(a)) > limit)
    return "its conv weights and one image's maps take " + std::to_string(sharedBytesOf(a)) +
           " bytes of shared memory; a block may have " + std::to_string(limit);
  return "";
}

// The grid-wide path's launch, found once: as many blocks as the GPU holds at once (a cooperative
// launch needs every block resident, or its grid syncs would wait for blocks that never start);
// no blocks, and why, where it cannot be launched.
struct GridLaunch {
  int blocks = 0;
  int blocksPerMultiprocessor = 0;
  std::string whyNot;
};

const GridLaunch& gridLaunch() {
  static const GridLaunch launch = [] {
    GridLaunch g;
    if (!gpuInfo().usable) {
      g.whyNot = gpuInfo().unusableReason;
      return g;
    }
    int device = 0, cooperative = 0, multiprocessors = 0;
    CONVSCOPE_CUDA_CHECK(cudaGetDevice(&device));
    CONVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    CONVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    if (!cooperative) {
      g.whyNot = "the GPU cannot launch cooperative kernels";
      return g;
    }
    CONVSCOPE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&g.blocksPerMultiprocessor,
                                                                       wholeNetworkGridKernel, kGridThreads, 0));
    g.blocks = g.blocksPerMultiprocessor * multiprocessors;
    if (g.blocks < 1) g.whyNot = "no block of " + std::to_string(kGridThreads) + " threads fits on a multiprocessor";
    return g;
  }();
  return launch;
}

enum class WholeNetworkPath { kBlocks, kGrid };

// A test hook: CONVSCOPE_WHOLE_NETWORK_PATH=blocks or =grid forces a path at every batch size, so
// that the tests check both on the same batches. Read at every launch (a test switches it between
// engines); a recorded graph keeps the path it was recorded with.
std::optional<WholeNetworkPath> forcedPath() {
  const char* value = std::getenv("CONVSCOPE_WHOLE_NETWORK_PATH");
  if (!value || !*value) return std::nullopt;
  if (std::string(value) == "blocks") return WholeNetworkPath::kBlocks;
  if (std::string(value) == "grid") return WholeNetworkPath::kGrid;
  throw Error(std::string("the environment variable CONVSCOPE_WHOLE_NETWORK_PATH is '") + value +
              "'; it takes 'blocks' or 'grid' (a test hook; unset, the batch size chooses)");
}

// Whether the grid-wide path's 32-bit indices hold `images` of `scratchFloats` each, with room
// for a grid's worth of threads past the end of a loop.
bool gridIndicesFit(int images, int scratchFloats) {
  return int64_t{images} * scratchFloats <= INT_MAX / 2;
}

// The grid-wide path when the per-image-block path would fill fewer blocks than the GPU has
// multiprocessors (and the GPU can launch it), else the per-image-block path. `scratchFloats`
// 0: not known (the geometry's description).
WholeNetworkPath pathFor(int images, int scratchFloats) {
  if (const std::optional<WholeNetworkPath> forced = forcedPath()) {
    if (*forced == WholeNetworkPath::kGrid && !gridIndicesFit(images, scratchFloats))
      throw Error("the whole-network kernel's grid-wide path, forced by CONVSCOPE_WHOLE_NETWORK_PATH, cannot index " +
                  std::to_string(images) + " images of " + std::to_string(scratchFloats) + " floats with an int");
    return *forced;
  }
  const int imageBlocks = (images + kImagesPerBlock - 1) / kImagesPerBlock;
  return gridLaunch().blocks > 0 && imageBlocks < gpuInfo().multiprocessors && gridIndicesFit(images, scratchFloats)
             ? WholeNetworkPath::kGrid
             : WholeNetworkPath::kBlocks;
}

// The lanes per item of a conv layer on the grid-wide path: a power of two up to 32, doubled
// while the items times the lanes do not yet fill the grid's threads twice and every lane still
// has a tap.
int lanesFor(int64_t items, int taps, int64_t gridThreads) {
  int lanes = 1;
  while (lanes < 32 && lanes * 2 <= taps && items * lanes < 2 * gridThreads) lanes *= 2;
  return lanes;
}

void launchGridPath(Device& device, NetworkArgs& a, const NetworkRun& run) {
  const GridLaunch& grid = gridLaunch();
  if (grid.blocks < 1) throw Error("the whole-network kernel's grid-wide path cannot run here: " + grid.whyNot);
  // The packed conv weights and two scratch buffers of scratchFloats per image, stream-ordered:
  // freed (to the device's pool) after this launch, and in a recording a graph allocation of its
  // own, so that no later run of another batch size can move memory a recorded graph still reads.
  // The packed weights come first, at the allocation's (256-byte) alignment; each layer's start
  // is a multiple of 4 floats.
  const int64_t bufferFloats = int64_t{run.images} * a.scratchFloats;
  const DeviceTensor scratch = device.allocate({a.weightFloats + 2 * bufferFloats});
  a.packedWeights = scratch.data();
  a.scratch0 = scratch.data() + a.weightFloats;
  a.scratch1 = a.scratch0 + bufferFloats;
  GpuContext& context = contextOf(device);
  const int64_t gridThreads = int64_t{grid.blocks} * kGridThreads;
  for (int l = 0; l < a.convCount; ++l) {
    ConvArgs& c = a.conv[l];
    c.weights = run.weights[static_cast<size_t>(l)];
    c.bias = run.biases[static_cast<size_t>(l)];
    c.lanes =
        lanesFor(int64_t{run.images} * (paddedChannels(c.outChannels) / kChannelsPerThread) * c.outHeight * c.outWidth,
                 c.inChannels * c.kernelHeight * c.kernelWidth, gridThreads);
  }
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(grid.blocks));
  config.blockDim = dim3(kGridThreads);
  config.dynamicSmemBytes = 0;
  config.stream = context.stream();
  config.attrs = &cooperative;
  config.numAttrs = 1;
  TracedScope scope(context, "wholeNetworkGridKernel");
  CONVSCOPE_CUDA_CHECK(cudaLaunchKernelEx(&config, wholeNetworkGridKernel, a));
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void launchBlocksPath(GpuContext& context, NetworkArgs& a, const ChainNetwork& network, const NetworkRun& run) {
  cudaStream_t stream = context.stream();
  // The conv layers' weights side by side, packed as the blocks keep them in shared memory. This
  // launch runs before every whole-network launch, so a recorded graph replays it too.
  float* convWeights = static_cast<float*>(context.workspace(sizeof(float) * std::max(a.weightFloats, 1)));
  for (int l = 0; l < a.convCount; ++l) {
    const ConvProblem& p = network.convs[static_cast<size_t>(l)].problem;
    const int taps = p.inChannels * p.kernelHeight * p.kernelWidth;
    packConvWeightsKernel<<<std::min(64, (taps * paddedChannels(p.outChannels) + 255) / 256), 256, 0, stream>>>(
        run.weights[static_cast<size_t>(l)], p.outChannels, taps, convWeights + a.conv[l].weightOffset);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
    a.conv[l].bias = run.biases[static_cast<size_t>(l)];
  }
  const size_t shared = sharedBytesOf(a);
  CONVSCOPE_CUDA_CHECK(
      cudaFuncSetAttribute(wholeNetworkKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  const int blocks = (run.images + kImagesPerBlock - 1) / kImagesPerBlock;
  TracedScope scope(context, "wholeNetworkKernel");
  wholeNetworkKernel<<<blocks, kThreads, shared, stream>>>(a, convWeights);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void runWholeNetwork(Device& device, const ChainNetwork& network, const NetworkRun& run) {
  std::string whyNot;
  NetworkArgs a = argsOf(network, &whyNot);
  if (!whyNot.empty()) throw Error("the whole-network kernel cannot take this network: " + whyNot);
  if (run.images < 1 || !run.output || (!run.input && (!run.bytes || !run.rowTaps || !run.colTaps)))
    throw Error("the whole-network kernel: no images or a null device pointer");
  const size_t layers = network.convs.size() + network.dense.size();
  if (run.weights.size() != layers || run.biases.size() != layers)
    throw Error("the whole-network kernel: " + std::to_string(layers) + " layers but " +
                std::to_string(run.weights.size()) + " weights");
  for (int l = 0; l < a.denseCount; ++l) {
    a.dense[l].weights = run.weights[static_cast<size_t>(a.convCount + l)];
    a.dense[l].bias = run.biases[static_cast<size_t>(a.convCount + l)];
  }
  a.images = run.images;
  a.input = run.input;
  a.bytes = run.bytes;
  a.byteHeight = run.byteHeight;
  a.byteWidth = run.byteWidth;
  a.rowTaps = run.rowTaps;
  a.colTaps = run.colTaps;
  a.output = run.output;
  if (pathFor(run.images, a.scratchFloats) == WholeNetworkPath::kGrid)
    launchGridPath(device, a, run);
  else
    launchBlocksPath(contextOf(device), a, network, run);
}

// A layer alone is not what this step does: the plan gives it to an earlier step.
std::string declinesLayers(const ConvProblem&) {
  return "it runs whole networks only";
}

std::vector<KernelLaunchGeometry> geometry(const ConvProblem& problem) {
  const std::string blocksMapping = "a block takes " + std::to_string(kImagesPerBlock) +
                                    " images through every layer in turn; in a conv layer a thread computes " +
                                    std::to_string(kChannelsPerThread) + " channels at one pooled position";
  const GridLaunch& grid = gridLaunch();
  const std::string gridMapping =
      "one cooperative launch of " +
      (grid.blocks > 0 ? std::to_string(grid.blocks) + " blocks (" + std::to_string(grid.blocksPerMultiprocessor) +
                             " per multiprocessor, all resident)"
                       : std::string("as many blocks as the GPU holds at once")) +
      " of " + std::to_string(kGridThreads) +
      " threads, every block on every stage with a grid sync between stages: the input, each conv layer as "
      "(image, channel, pooled position) items of 1-32 lanes splitting the taps, each fully connected layer a warp "
      "per (image, neuron), the softmax a warp per image (with the last layer, when it has up to 32 outputs)";
  const int imageBlocks = (problem.batch + kImagesPerBlock - 1) / kImagesPerBlock;
  KernelLaunchGeometry g;
  if (grid.blocks > 0 && pathFor(problem.batch, 0) == WholeNetworkPath::kGrid) {
    g.kernel = "wholeNetworkGridKernel";
    g.gridX = grid.blocks;
    g.blockX = kGridThreads;
    g.mapping = "grid-wide path (fewer image blocks than multiprocessors): " + gridMapping + ". From " +
                std::to_string(kImagesPerBlock) + " images per multiprocessor up, the per-image-block " +
                "path instead: wholeNetworkKernel, " + std::to_string(imageBlocks) + " blocks of " +
                std::to_string(kThreads) + " threads at this batch, " + blocksMapping;
  } else {
    g.kernel = "wholeNetworkKernel";
    g.gridX = imageBlocks;
    g.blockX = kThreads;
    g.mapping = "per-image-block path: " + blocksMapping + ". Below " + std::to_string(kImagesPerBlock) +
                " images per multiprocessor, the grid-wide path instead: wholeNetworkGridKernel, " + gridMapping;
  }
  return {g};
}

void runLayer(Device&, const ConvProblem& problem, const float*, const float*, float*, const ConvEpilogue&) {
  throw Error("the whole-network kernel runs whole networks, not the layer " + problem.describe());
}

}  // namespace

extern const GpuKernel kWholeNetworkKernel{declinesLayers, geometry, runLayer};
extern const GpuNetworkKernel kWholeNetworkNetwork{declines, runWholeNetwork};

}  // namespace convscope::gpu
