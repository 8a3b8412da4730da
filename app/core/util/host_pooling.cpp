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
// without the general loop's bounds. The maximum is taken in poolWindow's order, from -inf, so
// that a NaN is treated alike.
void maxPool2x2(const PoolGeometry& g, const float* src, float* dst) {
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  for (int oy = 0; oy < g.outHeight; ++oy) {
    const float* top = src + int64_t{2 * oy} * g.inWidth;
    const float* bottom = top + g.inWidth;
    float* out = dst + int64_t{oy} * g.outWidth;
#pragma omp simd
    for (int ox = 0; ox < g.outWidth; ++ox)
      out[ox] = std::max(std::max(std::max(std::max(kLowest, top[2 * ox]), top[2 * ox + 1]), bottom[2 * ox]),
                         bottom[2 * ox + 1]);
  }
}

bool isSimple2x2(const PoolGeometry& g, bool maxPool) {
  // Every window of the 2x2/2 case lies inside the input: no -inf, no clipping to treat.
  return maxPool && g.kernelHeight == 2 && g.kernelWidth == 2 && g.strideHeight == 2 && g.strideWidth == 2 &&
         g.padTop == 0 && g.padLeft == 0 && 2 * g.outHeight <= g.inHeight && 2 * g.outWidth <= g.inWidth;
}

// One block of `Block` channels of one image: every window's lanes at once (one vector), in
// poolWindow's order, then each lane to its own output plane.
template <int Block>
void poolBlock(const PoolGeometry& g, bool maxPool, const float* src, float* const* planes, int lanes) {
  for (int oy = 0; oy < g.outHeight; ++oy)
    for (int ox = 0; ox < g.outWidth; ++ox) {
      const int y0 = oy * g.strideHeight - g.padTop, x0 = ox * g.strideWidth - g.padLeft;
      const int yBegin = std::max(y0, 0), yEnd = std::min(y0 + g.kernelHeight, g.inHeight);
      const int xBegin = std::max(x0, 0), xEnd = std::min(x0 + g.kernelWidth, g.inWidth);
      alignas(64) float acc[Block];
      for (int l = 0; l < Block; ++l) acc[l] = maxPool ? -std::numeric_limits<float>::infinity() : 0.0f;
      for (int y = yBegin; y < yEnd; ++y)
        for (int x = xBegin; x < xEnd; ++x) {
          const float* v = src + (int64_t{y} * g.inWidth + x) * Block;
          if (maxPool) {
#pragma omp simd
            for (int l = 0; l < Block; ++l) acc[l] = std::max(acc[l], v[l]);
          } else {
#pragma omp simd
            for (int l = 0; l < Block; ++l) acc[l] += v[l];
          }
        }
      const int64_t at = int64_t{oy} * g.outWidth + ox;
      if (maxPool) {
        for (int l = 0; l < lanes; ++l) planes[l][at] = acc[l];
        continue;
      }
      int count;
      if (g.countIncludePad) {
        const int yPadEnd = std::min(y0 + g.kernelHeight, g.inHeight + g.padBottom);
        const int xPadEnd = std::min(x0 + g.kernelWidth, g.inWidth + g.padRight);
        count = (yPadEnd - y0) * (xPadEnd - x0);
      } else {
        count = std::max(0, yEnd - yBegin) * std::max(0, xEnd - xBegin);
      }
      // Divided as one vector, then scattered: the same IEEE quotients as one lane at a time.
      const float divisor = count > 0 ? static_cast<float>(count) : 1.0f;
#pragma omp simd
      for (int l = 0; l < Block; ++l) acc[l] = count > 0 ? acc[l] / divisor : 0.0f;
      for (int l = 0; l < lanes; ++l) planes[l][at] = acc[l];
    }
}

}  // namespace

void poolPlanes(const PoolGeometry& g, bool maxPool, const float* input, float* output, int64_t firstPlane,
                int64_t planeCount) {
  const int64_t inPlane = int64_t{g.inHeight} * g.inWidth;
  const int64_t outPlane = int64_t{g.outHeight} * g.outWidth;
  const bool simple2x2 = isSimple2x2(g, maxPool);
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

void poolBlockedPlanes(const PoolGeometry& g, bool maxPool, int block, int channels, const float* input, float* output,
                       int64_t images) {
  const int64_t inPlane = int64_t{g.inHeight} * g.inWidth;
  const int64_t outPlane = int64_t{g.outHeight} * g.outWidth;
  const int blocks = (channels + block - 1) / block;
  float* planes[16];
  for (int64_t n = 0; n < images; ++n)
    for (int b = 0; b < blocks; ++b) {
      const float* src = input + (n * blocks + b) * inPlane * block;
      const int lanes = std::min(block, channels - b * block);
      for (int l = 0; l < lanes; ++l) planes[l] = output + (n * channels + b * block + l) * outPlane;
      if (block == 16)
        poolBlock<16>(g, maxPool, src, planes, lanes);
      else
        poolBlock<8>(g, maxPool, src, planes, lanes);
    }
}

}  // namespace convscope
