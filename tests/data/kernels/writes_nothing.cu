// A kernel that computes nothing and writes nothing: the fastest time there is. The check finds
// every output never written; the fair timing rejects its first repetition for the same reason.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  (void)input, (void)weights, (void)output, (void)s;
}
