// Breaks the contract: the shape comes as a pointer, not the ConvShape the contract passes by value.
#include "convscope_kernel.h"
#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, const ConvShape* s) {
  output[0] = input[0] * weights[0] + s->batch;
}
