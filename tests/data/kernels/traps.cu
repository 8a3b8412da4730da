// Stops every thread with __trap(): the student must read "trapped", not a CUDA error's name.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  if (s.batch > 0) __trap();
  output[0] = input[0] * weights[0];
}
