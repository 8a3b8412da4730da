// An assertion that fails (the student's own check on an index): the message must say
// "assertion failed", its line (11) and its text.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  assert(s.kernelHeight > 99);
  output[0] = input[0] * weights[0];
}
