#include "app/core/data/gray_image.h"

#include <algorithm>
#include <cstdint>

namespace convscope {
namespace {

using Tap = BilinearTap;

// The bilinear resize of resizeBilinearHalfPixel over a source given by `sample(y, x)`: a picture
// in memory, or one padded with a background that is never built (see resizedToFit).
template <typename Sample>
void resizeBilinear(Sample sample, int srcHeight, int srcWidth, float* dst, int dstHeight, int dstWidth) {
  if (srcHeight == dstHeight && srcWidth == dstWidth) {  // a copy, even of an infinite or NaN pixel
    for (int y = 0; y < dstHeight; ++y)
      for (int x = 0; x < dstWidth; ++x) dst[static_cast<size_t>(y) * dstWidth + x] = sample(y, x);
    return;
  }
  const std::vector<Tap> rows = bilinearTaps(srcHeight, dstHeight);
  const std::vector<Tap> cols = bilinearTaps(srcWidth, dstWidth);
  for (int y = 0; y < dstHeight; ++y) {
    const Tap& r = rows[static_cast<size_t>(y)];
    for (int x = 0; x < dstWidth; ++x) {
      const Tap& c = cols[static_cast<size_t>(x)];
      dst[static_cast<size_t>(y) * dstWidth + x] =
          r.lowWeight * (c.lowWeight * sample(r.low, c.low) + c.highWeight * sample(r.low, c.high)) +
          r.highWeight * (c.lowWeight * sample(r.high, c.low) + c.highWeight * sample(r.high, c.high));
    }
  }
}

}  // namespace

// PyTorch's area_pixel_compute_source_index for linear modes: source = scale * (dst + 0.5) - 0.5,
// clamped at 0; the upper neighbour is clamped at the last pixel.
std::vector<BilinearTap> bilinearTaps(int srcSize, int dstSize) {
  const float scale = static_cast<float>(srcSize) / static_cast<float>(dstSize);
  std::vector<BilinearTap> result(static_cast<size_t>(dstSize));
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

void resizeBilinearHalfPixel(const float* src, int srcHeight, int srcWidth, float* dst, int dstHeight, int dstWidth) {
  resizeBilinear([src, srcWidth](int y, int x) { return src[static_cast<size_t>(y) * srcWidth + x]; }, srcHeight,
                 srcWidth, dst, dstHeight, dstWidth);
}

GrayImage resized(const GrayImage& image, int height, int width) {
  GrayImage out{height, width, std::vector<float>(static_cast<size_t>(height) * width)};
  resizeBilinearHalfPixel(image.pixels.data(), image.height, image.width, out.pixels.data(), height, width);
  return out;
}

float backgroundValue(const GrayImage& image) {
  if (image.height <= 0 || image.width <= 0) return 0.0f;
  // A garment fills a picture along its longer dimension and touches the long sides (a dress the
  // full height of a landscape photo): they may be mostly garment. The short sides are background
  // unless the garment fills the picture both ways, so only they count; a square picture has no
  // short side and counts its whole border.
  std::vector<float> border;
  if (image.width >= image.height) {  // the left and right columns
    for (int y = 0; y < image.height; ++y)
      border.push_back(image.at(y, 0)), border.push_back(image.at(y, image.width - 1));
  }
  if (image.height >= image.width) {  // the top and bottom rows, without the corners already counted
    const int first = image.width == image.height ? 1 : 0, last = image.width - first;
    for (int x = first; x < last; ++x)
      border.push_back(image.at(0, x)), border.push_back(image.at(image.height - 1, x));
  }
  // The median, so that a garment touching these sides does not lighten the padding.
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
  // The canvas is never built: the resize reads the picture where it lies on the canvas and the
  // background elsewhere. Built, a 20000 x 100 panorama's canvas would take 20000 x 20000 floats
  // (1.6 GB) on the way to 48 x 48; read this way, the result is the same to the bit and only
  // the target is allocated.
  const int top = (canvasHeight - image.height) / 2, left = (canvasWidth - image.width) / 2;
  const auto onCanvas = [&](int y, int x) {
    y -= top;
    x -= left;
    return y >= 0 && y < image.height && x >= 0 && x < image.width ? image.at(y, x) : background;
  };
  GrayImage out{height, width, std::vector<float>(static_cast<size_t>(height) * width)};
  resizeBilinear(onCanvas, canvasHeight, canvasWidth, out.pixels.data(), height, width);
  return out;
}

GrayImage resizedToFit(const GrayImage& image, int height, int width) {
  return resizedToFit(image, height, width, backgroundValue(image));
}

}  // namespace convscope
