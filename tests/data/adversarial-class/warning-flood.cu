// Attack: 65,536 compiler warnings, a log of about 10 MB, to flood the grader's messages, files
// and memory. Stopped by: the compiler's log is capped where it is kept, and a warning is no
// error: the kernel is right, so it passes. Expected: passed on a GPU; compiled, not run: no GPU.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

#define NOISE1 \
  { int unused_variable_to_fill_the_compiler_log; }
#define NOISE4 NOISE1 NOISE1 NOISE1 NOISE1
#define NOISE16 NOISE4 NOISE4 NOISE4 NOISE4
#define NOISE64 NOISE16 NOISE16 NOISE16 NOISE16
#define NOISE256 NOISE64 NOISE64 NOISE64 NOISE64
#define NOISE1024 NOISE256 NOISE256 NOISE256 NOISE256
#define NOISE4096 NOISE1024 NOISE1024 NOISE1024 NOISE1024
#define NOISE16384 NOISE4096 NOISE4096 NOISE4096 NOISE4096
#define NOISE65536 NOISE16384 NOISE16384 NOISE16384 NOISE16384
__device__ void convscope_noise() {
  NOISE65536
}

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
  output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = sum;
}
