// A kernel that writes its output on its first call only and returns at once on every later one
// (a __device__ counter of finished launches): what a timer that checks only the first run, or
// none, would rank as fast. The check's second shape and every timed repetition find its output
// never written.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

__device__ volatile int launchesDone;
__device__ unsigned int finishedBlocks;

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  if (launchesDone > 0) return;
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h < s.outHeight && w < s.outWidth) {
    float sum = 0.0f;
    for (int c = 0; c < s.inChannels; ++c)
      for (int p = 0; p < s.kernelHeight; ++p)
        for (int q = 0; q < s.kernelWidth; ++q) {
          const int y = h * s.strideHeight - s.padTop + p;
          const int x = w * s.strideWidth - s.padLeft + q;
          if (y < 0 || y >= s.inHeight || x < 0 || x >= s.inWidth) continue;
          sum += input[((n * s.inChannels + c) * s.inHeight + y) * s.inWidth + x] *
                 weights[((m * s.inChannels + c) * s.kernelHeight + p) * s.kernelWidth + q];
        }
    output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = sum;
  }
  // The last block of the first launch counts it: later blocks of that launch have all started.
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && atomicAdd(&finishedBlocks, 1u) == gridDim.x * gridDim.y * gridDim.z - 1) {
    __threadfence();
    launchesDone = 1;
  }
}
