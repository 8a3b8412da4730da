#include "data/gray_image.h"

#include <algorithm>

namespace convscope {
namespace {

struct Tap {
  int low, high;
  float lowWeight, highWeight;
};

// PyTorch's area_pixel_compute_source_index for linear modes: source = scale * (dst + 0.5) - 0.5,
// clamped at 0; the upper neighbour is clamped at the last pixel.
std::vector<Tap> taps(int srcSize, int dstSize) {
  const float scale = static_cast<float>(srcSize) / static_cast<float>(dstSize);
  std::vector<Tap> result(static_cast<size_t>(dstSize));
  for (int i = 0; i < dstSize; ++i) {
    float source = scale * (static_cast<float>(i) + 0.5f) - 0.5f;
    if (source < 0.0f) source = 0.0f;
    const int low = std::min(static_cast<int>(source), srcSize - 1);
    const int high = std::min(low + 1, srcSize - 1);
    const float highWeight = std::clamp(source - static_cast<float>(low), 0.0f, 1.0f);
    result[static_cast<size_t>(i)] = {low, high, 1.0f - highWeight, highWeight};
  }
  return result;
}

}  // namespace

void resizeBilinearHalfPixel(const float* src, int srcHeight, int srcWidth, float* dst,
                             int dstHeight, int dstWidth) {
  if (srcHeight == dstHeight && srcWidth == dstWidth) {
    std::copy(src, src + static_cast<size_t>(srcHeight) * srcWidth, dst);
    return;
  }
  const std::vector<Tap> rows = taps(srcHeight, dstHeight);
  const std::vector<Tap> cols = taps(srcWidth, dstWidth);
  for (int y = 0; y < dstHeight; ++y) {
    const Tap& r = rows[static_cast<size_t>(y)];
    const float* top = src + static_cast<size_t>(r.low) * srcWidth;
    const float* bottom = src + static_cast<size_t>(r.high) * srcWidth;
    for (int x = 0; x < dstWidth; ++x) {
      const Tap& c = cols[static_cast<size_t>(x)];
      dst[static_cast<size_t>(y) * dstWidth + x] =
          r.lowWeight * (c.lowWeight * top[c.low] + c.highWeight * top[c.high]) +
          r.highWeight * (c.lowWeight * bottom[c.low] + c.highWeight * bottom[c.high]);
    }
  }
}

GrayImage resized(const GrayImage& image, int height, int width) {
  GrayImage out{height, width, std::vector<float>(static_cast<size_t>(height) * width)};
  resizeBilinearHalfPixel(image.pixels.data(), image.height, image.width, out.pixels.data(),
                          height, width);
  return out;
}

}  // namespace convscope
