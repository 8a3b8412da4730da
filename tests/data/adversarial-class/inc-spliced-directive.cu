// Attack: the directive's name cut by a real line splice (a backslash right before the line end):
// NVRTC joins the lines into #include.
// Stopped by: the #include filter, which reads the file as NVRTC does; behind it the compiler's
// sandbox (Landlock) could not open the file either. Expected: breaks the contract, with or without
// a GPU (tests/data/adversarial-class/expected.json).
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

#inc\
lude "../secret.txt"

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
