// Beyond the course, step 13, the whole network in one kernel: from the 8-bit images as the data
// set stores them (resized as they are read, with the host's arithmetic) or the float batch, through
// every convolution with its bias, activation and pooling, the flatten, every fully connected layer
// and the softmax, to the probabilities. Between layers nothing reaches global memory: a block
// keeps each image's maps in shared memory, with the conv weights, and takes a few images in turn
// so that the fully connected layers, whose weights are read from L2, read them once per few
// images. Every other step launches a dozen kernels that write and re-read each layer's output;
// this one reads the images, the weights and writes the scores.
//
// Mapping: one block per kImagesPerBlock images. Conv layer: a thread computes kChannelsPerThread
// output channels at one pooled position, every conv value of its pooling window at once, so each
// input value read from shared memory feeds 4 multiply-adds and each 16-byte weight load up to
// 16; a window inside the input skips the padding checks. Fully
// connected layer: a warp per output neuron, its lanes splitting the inputs (coalesced weight
// rows), for all the block's images at once, then a shuffle reduction.
#include <cfloat>
#include <climits>
#include <cstdint>
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
      const float bias = c.bias ? c.bias[channel] : 0.0f;
      float pooled = c.pooling == FusedPooling::kMax ? -FLT_MAX : 0.0f;
#pragma unroll
      for (int wy = 0; wy < kPoolH; ++wy)
#pragma unroll
        for (int wx = 0; wx < kPoolW; ++wx) {
          const float v = activate(c.activation, acc[wy][wx][k] + bias);
          pooled = c.pooling == FusedPooling::kMax ? fmaxf(pooled, v) : pooled + v;
        }
      if (c.pooling == FusedPooling::kAverage) pooled /= static_cast<float>(kPoolH * kPoolW);
      out[(channel * c.outHeight + py) * c.outWidth + px] = pooled;
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
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (warp < count) {
    const float* scores = in + warp * inStride;
    float* out = a.output + (int64_t{first} + warp) * classes;
    if (!a.softmax) {
      for (int j = lane; j < classes; j += 32) out[j] = scores[j];
    } else {
      float peak = -INFINITY;
      for (int j = lane; j < classes; j += 32) peak = fmaxf(peak, scores[j]);
      for (int offset = 16; offset > 0; offset /= 2) peak = fmaxf(peak, __shfl_xor_sync(0xffffffffu, peak, offset));
      float sum = 0.0f;
      for (int j = lane; j < classes; j += 32) sum += expf(scores[j] - peak);
      for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      for (int j = lane; j < classes; j += 32) out[j] = expf(scores[j] - peak) / sum;
    }
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
  GpuContext& context = contextOf(device);
  cudaStream_t stream = context.stream();
  // The conv layers' weights side by side, packed as the blocks keep them in shared memory.
  float* convWeights = static_cast<float*>(context.workspace(sizeof(float) * std::max(a.weightFloats, 1)));
  for (int l = 0; l < a.convCount; ++l) {
    const ConvProblem& p = network.convs[static_cast<size_t>(l)].problem;
    const int taps = p.inChannels * p.kernelHeight * p.kernelWidth;
    packConvWeightsKernel<<<std::min(64, (taps * paddedChannels(p.outChannels) + 255) / 256), 256, 0, stream>>>(
        run.weights[static_cast<size_t>(l)], p.outChannels, taps, convWeights + a.conv[l].weightOffset);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
    a.conv[l].bias = run.biases[static_cast<size_t>(l)];
  }
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
  const size_t shared = sharedBytesOf(a);
  CONVSCOPE_CUDA_CHECK(
      cudaFuncSetAttribute(wholeNetworkKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  const int blocks = (run.images + kImagesPerBlock - 1) / kImagesPerBlock;
  TracedScope scope(context, "wholeNetworkKernel");
  wholeNetworkKernel<<<blocks, kThreads, shared, stream>>>(a, convWeights);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

// A layer alone is not what this step does: the plan gives it to an earlier step.
std::string declinesLayers(const ConvProblem&) {
  return "it runs whole networks only";
}

std::vector<KernelLaunchGeometry> geometry(const ConvProblem& problem) {
  KernelLaunchGeometry g;
  g.kernel = "wholeNetworkKernel";
  g.gridX = (problem.batch + kImagesPerBlock - 1) / kImagesPerBlock;
  g.blockX = kThreads;
  g.mapping = "a block takes " + std::to_string(kImagesPerBlock) +
              " images through every layer in turn; in a conv layer a thread computes " +
              std::to_string(kChannelsPerThread) + " channels at one pooled position";
  return {g};
}

void runLayer(Device&, const ConvProblem& problem, const float*, const float*, float*, const ConvEpilogue&) {
  throw Error("the whole-network kernel runs whole networks, not the layer " + problem.describe());
}

}  // namespace

extern const GpuKernel kWholeNetworkKernel{declinesLayers, geometry, runLayer};
extern const GpuNetworkKernel kWholeNetworkNetwork{declines, runWholeNetwork};

}  // namespace convscope::gpu
