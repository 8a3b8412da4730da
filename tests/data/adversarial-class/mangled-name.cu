// Attack: no extern "C", so the compiler mangles the kernel's name; a grader that looks kernels up
// by the name as written would find none, or a decoy of that name.
// Stopped by: the contract: a mangled name ("_Z...") is refused on the declaration's line.
// Expected: breaks the contract, with or without a GPU.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16
// Shared memory is sized for kernels up to this size; ConvScope gives layers with larger kernels
// (and strided ones, below) to another variant, and says so in the plan.
#define CONVSCOPE_MAX_KERNEL 7
// Its patch is the tile plus the halo, which holds for stride 1 only.
#define CONVSCOPE_MAX_STRIDE 1

#define PATCH_HEIGHT (CONVSCOPE_TILE_HEIGHT + CONVSCOPE_MAX_KERNEL - 1)
#define PATCH_WIDTH (CONVSCOPE_TILE_WIDTH + CONVSCOPE_MAX_KERNEL - 1)

__global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  __shared__ float patch[PATCH_HEIGHT][PATCH_WIDTH];
  const int tileRow = blockIdx.y * CONVSCOPE_TILE_HEIGHT;
  const int tileCol = blockIdx.x * CONVSCOPE_TILE_WIDTH;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  const int h = tileRow + threadIdx.y;
  const int w = tileCol + threadIdx.x;
  const int patchHeight = CONVSCOPE_TILE_HEIGHT + s.kernelHeight - 1;
  const int patchWidth = CONVSCOPE_TILE_WIDTH + s.kernelWidth - 1;

  float sum = 0.0f;
  for (int c = 0; c < s.inChannels; ++c) {
    const float* plane = input + (n * s.inChannels + c) * s.inHeight * s.inWidth;
    // The whole block loads the patch, zero outside the image (the padding).
    for (int i = threadIdx.y; i < patchHeight; i += CONVSCOPE_BLOCK_Y)
      for (int j = threadIdx.x; j < patchWidth; j += CONVSCOPE_BLOCK_X) {
        const int y = tileRow - s.padTop + i;
        const int x = tileCol - s.padLeft + j;
        patch[i][j] = (y >= 0 && y < s.inHeight && x >= 0 && x < s.inWidth) ? plane[y * s.inWidth + x] : 0.0f;
      }
    __syncthreads();
    if (h < s.outHeight && w < s.outWidth) {
      const float* k = weights + (m * s.inChannels + c) * s.kernelHeight * s.kernelWidth;
      for (int p = 0; p < s.kernelHeight; ++p)
        for (int q = 0; q < s.kernelWidth; ++q)
          sum += patch[threadIdx.y + p][threadIdx.x + q] * k[p * s.kernelWidth + q];
    }
    __syncthreads();  // before the next channel overwrites the patch
  }
  if (h < s.outHeight && w < s.outWidth) output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = sum;
}
