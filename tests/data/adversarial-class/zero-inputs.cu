// Attack: the kernel overwrites its (const) input and weights with zeros and writes zeros: right
// for the data as it is on the GPU after the launch, were the reference computed from that.
// Stopped by: the reference is computed in the grader's process from the seed, never read back
// from the kernel's buffers. Expected: wrong on a GPU; compiled, not run: no GPU without one.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  float* in = const_cast<float*>(input);
  float* wt = const_cast<float*>(weights);
  const long long inputs = static_cast<long long>(s.batch) * s.inChannels * s.inHeight * s.inWidth;
  const long long taps = static_cast<long long>(s.outChannels) * s.inChannels * s.kernelHeight * s.kernelWidth;
  const long long threads = static_cast<long long>(gridDim.x) * gridDim.y * gridDim.z * blockDim.x * blockDim.y;
  const long long first = ((static_cast<long long>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) *
                              blockDim.x * blockDim.y +
                          threadIdx.y * blockDim.x + threadIdx.x;
  for (long long i = first; i < inputs; i += threads) in[i] = 0.0f;
  for (long long i = first; i < taps; i += threads) wt[i] = 0.0f;
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h < s.outHeight && w < s.outWidth) output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = 0.0f;
}
