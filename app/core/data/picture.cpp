#include "app/core/data/picture.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace convscope {
namespace {

using Tap = BilinearTap;

// The bilinear resize of resizeBilinearHalfPixel over a source given by `sample(y, x)`: a picture
// in memory, or one padded with a background that is never built (see resizedToFit).
template <typename Sample>
void resizeWithTaps(Sample sample, const std::vector<Tap>& rows, const std::vector<Tap>& cols, float* dst) {
  const int dstHeight = static_cast<int>(rows.size()), dstWidth = static_cast<int>(cols.size());
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

template <typename Sample>
void resizeBilinear(Sample sample, int srcHeight, int srcWidth, float* dst, int dstHeight, int dstWidth) {
  if (srcHeight == dstHeight && srcWidth == dstWidth) {  // a copy, even of an infinite or NaN pixel
    for (int y = 0; y < dstHeight; ++y)
      for (int x = 0; x < dstWidth; ++x) dst[static_cast<size_t>(y) * dstWidth + x] = sample(y, x);
    return;
  }
  resizeWithTaps(sample, bilinearTaps(srcHeight, dstHeight), bilinearTaps(srcWidth, dstWidth), dst);
}

}  // namespace

Picture blankPicture(int height, int width, int channels) {
  Picture picture{height, width, {}, channels};
  picture.pixels.assign(picture.planeSize() * static_cast<size_t>(channels), 0.0f);
  return picture;
}

Picture grayOf(const Picture& picture) {
  if (picture.channels == 1) return picture;
  Picture gray = blankPicture(picture.height, picture.width, 1);
  const float *r = picture.plane(0), *g = picture.plane(1), *b = picture.plane(2);
  for (size_t i = 0; i < gray.planeSize(); ++i) gray.pixels[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i];
  return gray;
}

// PyTorch's area_pixel_compute_source_index for linear modes: source = scale * (dst + 0.5) - 0.5,
// clamped at 0; the upper neighbour is clamped at the last pixel.
std::vector<BilinearTap> bilinearTaps(int srcSize, int dstSize) {
  return bilinearTaps(srcSize, dstSize, 0, dstSize);
}

std::vector<BilinearTap> bilinearTaps(int srcSize, int64_t dstSize, int64_t first, int count) {
  const float scale = static_cast<float>(srcSize) / static_cast<float>(dstSize);
  std::vector<BilinearTap> result(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    float source = scale * (static_cast<float>(first + k) + 0.5f) - 0.5f;
    if (source < 0.0f) source = 0.0f;
    const int low = std::min(static_cast<int>(source), srcSize - 1);
    const int high = std::min(low + 1, srcSize - 1);
    const float highWeight = std::clamp(source - static_cast<float>(low), 0.0f, 1.0f);
    result[static_cast<size_t>(k)] = {low, high, 1.0f - highWeight, highWeight};
  }
  return result;
}

void resizeBilinearHalfPixel(const float* src, int srcHeight, int srcWidth, float* dst, int dstHeight, int dstWidth) {
  resizeBilinear([src, srcWidth](int y, int x) { return src[static_cast<size_t>(y) * srcWidth + x]; }, srcHeight,
                 srcWidth, dst, dstHeight, dstWidth);
}

Picture resized(const Picture& image, int height, int width) {
  Picture out = blankPicture(height, width, image.channels);
  for (int c = 0; c < image.channels; ++c)
    resizeBilinearHalfPixel(image.plane(c), image.height, image.width, out.plane(c), height, width);
  return out;
}

Picture centreCropped(const Picture& image, int height, int width, double cropFraction) {
  if (image.height <= 0 || image.width <= 0) return blankPicture(height, width, image.channels);
  // torchvision's Resize(S): the shorter side becomes S, the longer S * long / short rounded down.
  const int64_t shorter = std::lround(std::min(height, width) / cropFraction);
  int64_t resizedHeight = shorter, resizedWidth = shorter;
  if (image.height <= image.width)
    resizedWidth = shorter * image.width / image.height;
  else
    resizedHeight = shorter * image.height / image.width;
  resizedHeight = std::max<int64_t>(resizedHeight, height);
  resizedWidth = std::max<int64_t>(resizedWidth, width);
  // CenterCrop's offsets: round((resized - target) / 2), halves to even as Python's round().
  const auto offset = [](int64_t resizedSize, int target) {
    return static_cast<int64_t>(std::nearbyint(static_cast<double>(resizedSize - target) / 2.0));
  };
  // The taps of the whole resize at the rows and columns the crop keeps: only those are computed,
  // so a picture of 50,000,000 x 1 pixels costs no taps for its 12.8 billion resized columns.
  const std::vector<BilinearTap> rows =
      bilinearTaps(image.height, resizedHeight, offset(resizedHeight, height), height);
  const std::vector<BilinearTap> cols = bilinearTaps(image.width, resizedWidth, offset(resizedWidth, width), width);
  Picture out = blankPicture(height, width, image.channels);
  for (int c = 0; c < image.channels; ++c) {
    const float* src = image.plane(c);
    const int srcWidth = image.width;
    resizeWithTaps([src, srcWidth](int y, int x) { return src[static_cast<size_t>(y) * srcWidth + x]; }, rows, cols,
                   out.plane(c));
  }
  return out;
}

float backgroundValue(const Picture& image, int channel) {
  if (image.height <= 0 || image.width <= 0) return 0.0f;
  // A garment fills a picture along its longer dimension and touches the long sides (a dress the
  // full height of a landscape photo): they may be mostly garment. The short sides are background
  // unless the garment fills the picture both ways, so only they count; a square picture has no
  // short side and counts its whole border.
  std::vector<float> border;
  if (image.width >= image.height) {  // the left and right columns
    for (int y = 0; y < image.height; ++y)
      border.push_back(image.at(channel, y, 0)), border.push_back(image.at(channel, y, image.width - 1));
  }
  if (image.height >= image.width) {  // the top and bottom rows, without the corners already counted
    const int first = image.width == image.height ? 1 : 0, last = image.width - first;
    for (int x = first; x < last; ++x)
      border.push_back(image.at(channel, 0, x)), border.push_back(image.at(channel, image.height - 1, x));
  }
  // The median, so that a garment touching these sides does not lighten the padding.
  const auto middle = border.begin() + static_cast<std::ptrdiff_t>(border.size() / 2);
  std::nth_element(border.begin(), middle, border.end());
  return *middle;
}

namespace {

Picture resizedToFit(const Picture& image, int height, int width, const std::vector<float>& backgrounds) {
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
  Picture out = blankPicture(height, width, image.channels);
  for (int c = 0; c < image.channels; ++c) {
    const float background = backgrounds[static_cast<size_t>(c)];
    const auto onCanvas = [&](int y, int x) {
      y -= top;
      x -= left;
      return y >= 0 && y < image.height && x >= 0 && x < image.width ? image.at(c, y, x) : background;
    };
    resizeBilinear(onCanvas, canvasHeight, canvasWidth, out.plane(c), height, width);
  }
  return out;
}

}  // namespace

Picture resizedToFit(const Picture& image, int height, int width, float background) {
  return resizedToFit(image, height, width, std::vector<float>(static_cast<size_t>(image.channels), background));
}

Picture resizedToFit(const Picture& image, int height, int width) {
  std::vector<float> backgrounds;
  for (int c = 0; c < image.channels; ++c) backgrounds.push_back(backgroundValue(image, c));
  return resizedToFit(image, height, width, backgrounds);
}

}  // namespace convscope
