// Attack: the GPU's global timer tells a timed repetition from the check: the first 12 launches of
// a process (the check's 12 shapes) compute; after them, a gap of more than 20 microseconds since
// the last launch ended (an L2 flush, fresh inputs and a synchronisation before each timed
// repetition) is taken for "timed", and the kernel returns at once, writing nothing.
// Stopped by: every timed repetition's output is checked (and the network pass counts the
// answers), so a launch it skips is caught wherever it guesses "timed".
// Expected: wrong on a GPU; compiled, not run: no GPU without one.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

__device__ volatile unsigned long long lastLaunchEnded;  // %globaltimer, ns
__device__ volatile unsigned int launchesDone;
__device__ unsigned int finishedBlocks;

__device__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

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
  const bool timed = launchesDone >= 12 && globalTimer() - lastLaunchEnded > 20000;
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (!timed && h < s.outHeight && w < s.outWidth)
    output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = convAt(input, weights, s, n, m, h, w);
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && atomicAdd(&finishedBlocks, 1u) == gridDim.x * gridDim.y * gridDim.z - 1) {
    finishedBlocks = 0;
    lastLaunchEnded = globalTimer();
    __threadfence();
    launchesDone = launchesDone + 1;
  }
}
