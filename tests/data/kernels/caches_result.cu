// A kernel that games a timer: it computes a shape once and, when it is called again on the same
// shape, returns at once, leaving the answer of the first call in place (a __device__ flag marks
// the shape done). The check's shapes all differ, so the check alone passes it; the fair timing
// gives every repetition fresh inputs and a poisoned output, and checks the output of each one.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

__device__ int cachedShape[8];
__device__ volatile int cacheValid;
__device__ unsigned int finishedBlocks;

__device__ bool sameShape(const ConvShape& s) {
  return cachedShape[0] == s.batch && cachedShape[1] == s.inChannels && cachedShape[2] == s.inHeight &&
         cachedShape[3] == s.inWidth && cachedShape[4] == s.outChannels && cachedShape[5] == s.kernelHeight &&
         cachedShape[6] == s.kernelWidth && cachedShape[7] == s.strideHeight;
}

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  if (cacheValid && sameShape(s)) return;  // "already computed"
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
  // The last block of the launch to finish marks the shape done: no block of this launch is
  // still to start, so the first call itself is complete.
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    __threadfence();
    const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
    if (atomicAdd(&finishedBlocks, 1u) == blocks - 1) {
      finishedBlocks = 0;
      cachedShape[0] = s.batch;
      cachedShape[1] = s.inChannels;
      cachedShape[2] = s.inHeight;
      cachedShape[3] = s.inWidth;
      cachedShape[4] = s.outChannels;
      cachedShape[5] = s.kernelHeight;
      cachedShape[6] = s.kernelWidth;
      cachedShape[7] = s.strideHeight;
      __threadfence();
      cacheValid = 1;
    }
  }
}
