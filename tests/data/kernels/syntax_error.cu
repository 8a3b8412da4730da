// Line 10 lacks its semicolon; the compiler reports it at line 11, where it notices.
// clang-format off
#include "convscope_kernel.h"
#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  float x = input[0] * weights[0]
  output[0] = x + s.batch;
}
