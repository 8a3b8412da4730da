// The tiled template with an off-by-one in its halo: the patch treats the input's last column as
// outside the image (x < inWidth - 1), so every output whose window reaches that column is wrong.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16
#define CONVSCOPE_MAX_KERNEL 7
#define CONVSCOPE_MAX_STRIDE 1

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  __shared__ float patch[16 + 6][16 + 6];
  const int tileRow = blockIdx.y * 16, tileCol = blockIdx.x * 16;
  const int n = blockIdx.z / s.outChannels, m = blockIdx.z % s.outChannels;
  const int h = tileRow + threadIdx.y, w = tileCol + threadIdx.x;
  float sum = 0.0f;
  for (int c = 0; c < s.inChannels; ++c) {
    const float* plane = input + (n * s.inChannels + c) * s.inHeight * s.inWidth;
    for (int i = threadIdx.y; i < 16 + s.kernelHeight - 1; i += 16)
      for (int j = threadIdx.x; j < 16 + s.kernelWidth - 1; j += 16) {
        const int y = tileRow - s.padTop + i, x = tileCol - s.padLeft + j;
        patch[i][j] = (y >= 0 && y < s.inHeight && x >= 0 && x < s.inWidth - 1) ? plane[y * s.inWidth + x] : 0.0f;
      }
    __syncthreads();
    if (h < s.outHeight && w < s.outWidth)
      for (int p = 0; p < s.kernelHeight; ++p)
        for (int q = 0; q < s.kernelWidth; ++q)
          sum += patch[threadIdx.y + p][threadIdx.x + q] *
                 weights[((m * s.inChannels + c) * s.kernelHeight + p) * s.kernelWidth + q];
    __syncthreads();
  }
  if (h < s.outHeight && w < s.outWidth) output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = sum;
}
