// Attack: a cache keyed by the buffers' addresses: a launch on the same input, weights and output
// as the last one returns at once, leaving the last answer in place (a timer that reuses its
// buffers with the same values, or checks only the first launch, ranks it as free).
// Stopped by: fresh inputs and a poisoned output at every timed repetition, each one's output
// sampled and checked by the grader (and a check that allocates its buffers anew would catch it
// there). Expected: wrong on a GPU; compiled, not run: no GPU without one.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

__device__ const float* cachedInput;
__device__ const float* cachedWeights;
__device__ float* cachedOutput;
__device__ unsigned int finishedBlocks;

// output[n][m][h][w], as the naive template computes it.
__device__ float convAt(const float* input, const float* weights, const ConvShape& s, int n, int m, int h, int w) {
  float sum = 0.0f;
  for (int c = 0; c < s.inChannels; ++c)
    for (int p = 0; p < s.kernelHeight; ++p)
      for (int q = 0; q < s.kernelWidth; ++q) {
        const int y = h * s.strideHeight - s.padTop + p;
        const int x = w * s.strideWidth - s.padLeft + q;
        if (y < 0 || y >= s.inHeight || x < 0 || x >= s.inWidth) continue;  // padding: zero
        sum += input[((n * s.inChannels + c) * s.inHeight + y) * s.inWidth + x] *
               weights[((m * s.inChannels + c) * s.kernelHeight + p) * s.kernelWidth + q];
      }
  return sum;
}

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  if (cachedInput == input && cachedWeights == weights && cachedOutput == output) return;  // "already there"
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h < s.outHeight && w < s.outWidth)
    output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = convAt(input, weights, s, n, m, h, w);
  // The last block of the launch to finish records the buffers: every block has passed the test above.
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && atomicAdd(&finishedBlocks, 1u) == gridDim.x * gridDim.y * gridDim.z - 1) {
    finishedBlocks = 0;
    cachedInput = input;
    cachedWeights = weights;
    cachedOutput = output;
    __threadfence();
  }
}
