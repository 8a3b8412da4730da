// Attack: a compile that does not end: 4,096 constant expressions of 262,144 steps each (under
// NVRTC's limit per expression), in a binary tree of templates so that no instantiation is deep.
// NVRTC spends about 0.3 s on each on a laptop core, 20 minutes in all, in little memory.
// Stopped by: the compiler runs in a child process with the time limit (--time-limit) and is
// stopped there. Expected: does not compile, with or without a GPU ("time limit" is accepted too).
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

__host__ __device__ constexpr unsigned long long churn(unsigned long long steps, unsigned long long seed) {
  unsigned long long x = seed;
  for (unsigned long long i = 0; i < steps; ++i) x = x * 6364136223846793005ull + i;
  return x;
}
template <int Depth, unsigned long long Path>
struct Tree {
  static constexpr unsigned long long value = Tree<Depth - 1, Path * 2>::value + Tree<Depth - 1, Path * 2 + 1>::value;
};
template <unsigned long long Path>
struct Tree<0, Path> {
  static constexpr unsigned long long value = churn(1ull << 18, Path);
};

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h >= s.outHeight || w >= s.outWidth) return;  // the last patch may hang over the map's edge

  float sum = static_cast<float>(Tree<12, 1>::value & 0);
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
