// A tiled kernel whose shared patch is sized for windows up to 5x5, without saying so (no
// CONVSCOPE_MAX_KERNEL): every random shape of the check (kernels 1x1 to 5x5) passes, and the
// course models' 7x7 layers read past the patch. The check runs the model's own layers too, so it
// fails there (tests/gpu/test_user_kernels_gpu.cpp).
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16
#define PATCH_FOR_KERNEL 5
// Its patch is the tile plus the halo, which holds for stride 1 only.
#define CONVSCOPE_MAX_STRIDE 1

#define PATCH_HEIGHT (CONVSCOPE_TILE_HEIGHT + PATCH_FOR_KERNEL - 1)
#define PATCH_WIDTH (CONVSCOPE_TILE_WIDTH + PATCH_FOR_KERNEL - 1)

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  // Two spare rows and columns, never loaded: a 7x7 window reads stale values, inside the array.
  __shared__ float patch[PATCH_HEIGHT + 2][PATCH_WIDTH + 2];
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
    for (int i = threadIdx.y; i < patchHeight && i < PATCH_HEIGHT; i += CONVSCOPE_BLOCK_Y)
      for (int j = threadIdx.x; j < patchWidth && j < PATCH_WIDTH; j += CONVSCOPE_BLOCK_X) {
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
