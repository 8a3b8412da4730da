// Attack: right on the check's small batches, then a write a terabyte past its output at a batch of
// 100 or more: a fault that, in the grader's own process, would end the grading of the class.
// Stopped by: the kernel runs in a child process of its own; its fault ends that process only and
// is said in the student's terms. Expected: faulted on a GPU; compiled, not run: no GPU.
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
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h >= s.outHeight || w >= s.outWidth) return;
  const float sum = convAt(input, weights, s, n, m, h, w);
  output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = sum;
  if (s.batch >= 100) output[(1ll << 38) + threadIdx.x] = sum;  // never mapped
}
