#include "data/gray_image.h"

#include <algorithm>
#include <cstdint>

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

void resizeBilinearHalfPixel(const float* src, int srcHeight, int srcWidth, float* dst, int dstHeight, int dstWidth) {
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
  resizeBilinearHalfPixel(image.pixels.data(), image.height, image.width, out.pixels.data(), height, width);
  return out;
}

float backgroundValue(const GrayImage& image) {
  if (image.height <= 0 || image.width <= 0) return 0.0f;
  std::vector<float> border;
  for (int x = 0; x < image.width; ++x)
    border.push_back(image.at(0, x)), border.push_back(image.at(image.height - 1, x));
  for (int y = 1; y + 1 < image.height; ++y)
    border.push_back(image.at(y, 0)), border.push_back(image.at(y, image.width - 1));
  // The median, so that a garment touching the border does not lighten the padding.
  const auto middle = border.begin() + static_cast<std::ptrdiff_t>(border.size() / 2);
  std::nth_element(border.begin(), middle, border.end());
  return *middle;
}

GrayImage resizedToFit(const GrayImage& image, int height, int width, float background) {
  // The smallest canvas of the target's aspect ratio that holds the picture: compare
  // image.height / image.width with height / width without rounding.
  const int64_t tall = int64_t{image.height} * width, wide = int64_t{image.width} * height;
  if (tall == wide || image.height <= 0 || image.width <= 0) return resized(image, height, width);
  int canvasHeight = image.height, canvasWidth = image.width;
  if (wide > tall)  // too wide: pad above and below
    canvasHeight = static_cast<int>((int64_t{image.width} * height + width - 1) / width);
  else  // too tall: pad left and right
    canvasWidth = static_cast<int>((int64_t{image.height} * width + height - 1) / height);
  GrayImage canvas{canvasHeight, canvasWidth,
                   std::vector<float>(static_cast<size_t>(canvasHeight) * canvasWidth, background)};
  const int top = (canvasHeight - image.height) / 2, left = (canvasWidth - image.width) / 2;
  for (int y = 0; y < image.height; ++y)
    std::copy_n(image.pixels.begin() + static_cast<std::ptrdiff_t>(y) * image.width, image.width,
                canvas.pixels.begin() + static_cast<std::ptrdiff_t>(top + y) * canvasWidth + left);
  return resized(canvas, height, width);
}

GrayImage resizedToFit(const GrayImage& image, int height, int width) {
  return resizedToFit(image, height, width, backgroundValue(image));
}

}  // namespace convscope
