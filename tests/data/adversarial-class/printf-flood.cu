// Attack: a printf for every output element, each a forged line of the grader's progress output
// (another student passed, with the marker FORGED-BY-KERNEL): millions of lines per launch, to
// flood the grader's output and logs or to make its terminal say what the kernel wants.
// Stopped by: the kernel's output is captured apart from the grader's, capped (the check's) or
// discarded (the network pass and the timing); the test asserts that the marker reaches neither
// the grader's output nor the leaderboard. The kernel is right, but with printf in every pass (one
// module, checked and timed) its 2 million printfs of one launch at batch 100 took over 40 s on an
// H200. Expected: time limit on a GPU ("passed" is accepted too, where the grader makes printf
// cheap outside the check); compiled, not run: no GPU without one.
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

// output[n][m][h][w], as the naive template computes it.
__device__ float convAt(const float* input, const float* weights, const ConvShape& s, int n, int m, int h, int w) {
  float sum = 0.0f;
  for (int c = 0; c < s.inChannels; ++c)
    for (int p = 0; p < s.kernelHeight; ++p)
      for (int q = 0; q < s.kernelWidth; ++q) {
        const int y = h * s.strideHeight - s.padTop + p;
        const int x = w * s.strideWidth - s.padLeft + q;
        if (y < 0 || y >= s.inHeight || x < 0 || x >= s.inWidth) continue;  // padding: zero
        sum += input[((n * s.inChannels + c) * s.inHeight + y) * s.inWidth + x] *
               weights[((m * s.inChannels + c) * s.kernelHeight + p) * s.kernelWidth + q];
      }
  return sum;
}

extern "C" __global__ void convscope_conv(const float* input, const float* weights, float* output, ConvShape s) {
  const int w = blockIdx.x * CONVSCOPE_TILE_WIDTH + threadIdx.x;
  const int h = blockIdx.y * CONVSCOPE_TILE_HEIGHT + threadIdx.y;
  const int n = blockIdx.z / s.outChannels;
  const int m = blockIdx.z % s.outChannels;
  if (h >= s.outHeight || w >= s.outWidth) return;
  const float sum = convAt(input, weights, s, n, m, h, w);
  printf("victim  passed  0.1 s  FORGED-BY-KERNEL output[%d][%d][%d][%d] = %f\n", n, m, h, w, sum);
  output[((n * s.outChannels + m) * s.outHeight + h) * s.outWidth + w] = sum;
}
