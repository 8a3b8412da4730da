// Attack: right on the check's small batches, an endless loop at a batch over 1,000 (the network
// pass or the timing): a grader that waits for it never finishes the class.
// Stopped by: every step's child process has the time limit (--time-limit) and is stopped there;
// grading goes on. Expected: time limit on a GPU; compiled, not run: no GPU without one.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

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
  if (s.batch > 1000) {
    // An empty loop, even over a volatile local, was dropped by the compiler (measured on an
    // H200: the kernel ran in 6.5 ms at batch 10,000); an asm statement it must keep is not.
    for (;;) asm volatile("nanosleep.u32 1000;");
  }
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h < s.outHeight && w < s.outWidth)
    output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = convAt(input, weights, s, n, m, h, w);
}
