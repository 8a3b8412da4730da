// Never ends: the loop's condition is re-read from memory each time (volatile), so the compiler
// cannot drop it. ConvScope must stop it at the time limit.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  volatile int spin = 1;
  float sum = 0.0f;
  while (spin) sum += input[0] * weights[0];
  output[0] = sum + s.batch;
}
