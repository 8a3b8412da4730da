// The pooling of host_epilogue.h, in plain IEEE arithmetic: the sums keep their order and max
// sees -inf (host_activation.cpp, built with -ffast-math, holds the activations).
#include <algorithm>
#include <limits>

#include "app/core/util/host_epilogue.h"

namespace convscope {

namespace {

// y0, x0: the window's top-left corner in input coordinates (negative inside the padding).
float poolWindow(const PoolGeometry& g, bool maxPool, const float* src, int y0, int x0) {
  const int yBegin = std::max(y0, 0), yEnd = std::min(y0 + g.kernelHeight, g.inHeight);
  const int xBegin = std::max(x0, 0), xEnd = std::min(x0 + g.kernelWidth, g.inWidth);
  if (maxPool) {
    float best = -std::numeric_limits<float>::infinity();
    for (int y = yBegin; y < yEnd; ++y)
      for (int x = xBegin; x < xEnd; ++x) best = std::max(best, src[y * g.inWidth + x]);
    return best;
  }
  float sum = 0.0f;
  for (int y = yBegin; y < yEnd; ++y)
    for (int x = xBegin; x < xEnd; ++x) sum += src[y * g.inWidth + x];
  int count;
  if (g.countIncludePad) {
    // The window clipped to the padded input, as PyTorch and the ONNX reference count it.
    const int yPadEnd = std::min(y0 + g.kernelHeight, g.inHeight + g.padBottom);
    const int xPadEnd = std::min(x0 + g.kernelWidth, g.inWidth + g.padRight);
    count = (yPadEnd - y0) * (xPadEnd - x0);
  } else {
    count = std::max(0, yEnd - yBegin) * std::max(0, xEnd - xBegin);
  }
  return count > 0 ? sum / static_cast<float>(count) : 0.0f;
}

// The courses' pooling, 2x2 windows with stride 2 and no padding: two rows in, one row out,
// without the general loop's bounds.
void maxPool2x2(const PoolGeometry& g, const float* src, float* dst) {
  for (int oy = 0; oy < g.outHeight; ++oy) {
    const float* top = src + int64_t{2 * oy} * g.inWidth;
    const float* bottom = top + g.inWidth;
    float* out = dst + int64_t{oy} * g.outWidth;
#pragma omp simd
    for (int ox = 0; ox < g.outWidth; ++ox)
      out[ox] = std::max(std::max(top[2 * ox], top[2 * ox + 1]), std::max(bottom[2 * ox], bottom[2 * ox + 1]));
  }
}

}  // namespace

void poolPlanes(const PoolGeometry& g, bool maxPool, const float* input, float* output, int64_t firstPlane,
                int64_t planeCount) {
  const int64_t inPlane = int64_t{g.inHeight} * g.inWidth;
  const int64_t outPlane = int64_t{g.outHeight} * g.outWidth;
  // Every window of the 2x2/2 case lies inside the input: no -inf, no clipping to treat.
  const bool simple2x2 = maxPool && g.kernelHeight == 2 && g.kernelWidth == 2 && g.strideHeight == 2 &&
                         g.strideWidth == 2 && g.padTop == 0 && g.padLeft == 0 && 2 * g.outHeight <= g.inHeight &&
                         2 * g.outWidth <= g.inWidth;
  for (int64_t plane = firstPlane; plane < firstPlane + planeCount; ++plane) {
    const float* src = input + plane * inPlane;
    float* dst = output + plane * outPlane;
    if (simple2x2) {
      maxPool2x2(g, src, dst);
      continue;
    }
    for (int oy = 0; oy < g.outHeight; ++oy)
      for (int ox = 0; ox < g.outWidth; ++ox)
        dst[int64_t{oy} * g.outWidth + ox] =
            poolWindow(g, maxPool, src, oy * g.strideHeight - g.padTop, ox * g.strideWidth - g.padLeft);
  }
}

}  // namespace convscope
