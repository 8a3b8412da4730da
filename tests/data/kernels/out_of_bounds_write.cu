// Writes far past the end of the output: the GPU reports an illegal memory access.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  const long long far = 1ll << 40;  // a terabyte past the buffer: never mapped
  output[far + threadIdx.x] = input[0] * weights[0] + s.batch;
}
