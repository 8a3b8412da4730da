// Attack: a static __device__ array of 16 TiB, more memory than any GPU has: loading the module
// fails, which in a shared process would leave the grader (or the next student) without memory.
// Stopped by: the module is loaded only in the kernel's own child process, whose failure ends
// there. Expected: faulted on a GPU (the out-of-memory error; "memory limit" is accepted too);
// compiled, not run: no GPU without one (the compiler accepts the array).
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

__device__ float convscope_hoard[1ull << 42];

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h >= s.outHeight || w >= s.outWidth) return;  // the last patch may hang over the map's edge

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
  convscope_hoard[blockIdx.z] = sum;  // used, so it is kept
  output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = sum;
}
