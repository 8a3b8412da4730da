// Attack: the kernel launches a child grid to do the work and returns at once, hoping that the
// timer stops when the parent grid ends (work that outlives the launch).
// Stopped by: NVRTC compiles without relocatable device code, so a device-side launch does not
// compile; were it allowed, the timer synchronises the whole device after each launch.
// Expected: does not compile, with or without a GPU.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

__global__ void convscope_late_work(const float* input, const float* weights, float* output, ConvShape s) {
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h >= s.outHeight || w >= s.outWidth) return;
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

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0)
    convscope_late_work<<<gridDim, blockDim>>>(input, weights, output, s);
}
