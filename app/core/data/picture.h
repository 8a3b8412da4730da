// A picture with values in [0, 1]: one gray channel, or three in R, G, B order, each channel a
// plane of its own (the layout of one image of the network's N x C x H x W input). Every input
// source (data set, image file, drawing, photo) is brought to this form before it becomes a row
// of the network's input batch; what the model's own preprocessing then does to the values (mean,
// standard deviation, channel order) happens when the batch is made (see preprocessing.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace convscope {

struct Picture {
  int height = 0;
  int width = 0;
  std::vector<float> pixels;  // channels planes of height * width, row-major
  int channels = 1;

  std::size_t planeSize() const { return static_cast<std::size_t>(height) * width; }
  float at(int y, int x) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
  float at(int channel, int y, int x) const {
    return pixels[planeSize() * channel + static_cast<std::size_t>(y) * width + x];
  }
  const float* plane(int channel) const { return pixels.data() + planeSize() * channel; }
  float* plane(int channel) { return pixels.data() + planeSize() * channel; }
};

// A picture of `channels` planes of height x width, every value 0.
Picture blankPicture(int height, int width, int channels);

// One channel from three: the weights of ITU-R BT.601 (0.299 R + 0.587 G + 0.114 B), those of
// OpenCV's and Pillow's gray conversions. A gray picture is returned as it is.
Picture grayOf(const Picture& picture);

// Bilinear resampling with half-pixel centres, computed in float exactly as PyTorch's
// F.interpolate(mode='bilinear', align_corners=False, antialias=False) and OpenCV's INTER_LINEAR
// do, so that an image resized here matches the one the model was trained on. One plane.
void resizeBilinearHalfPixel(const float* src, int srcHeight, int srcWidth, float* dst, int dstHeight, int dstWidth);

// One output row's (or column's) two source rows and their weights. Output (y, x) is
//   rows[y].lowWeight * (cols[x].lowWeight * s(low, low) + cols[x].highWeight * s(low, high))
//   + rows[y].highWeight * (cols[x].lowWeight * s(high, low) + cols[x].highWeight * s(high, high))
// in float, in that order; the GPU's resize takes the same taps, so it computes the same bits.
struct BilinearTap {
  int low = 0, high = 0;
  float lowWeight = 1.0f, highWeight = 0.0f;
};
std::vector<BilinearTap> bilinearTaps(int srcSize, int dstSize);
// Taps first .. first + count - 1 of a resize to dstSize (a crop of a resize, without the rest).
std::vector<BilinearTap> bilinearTaps(int srcSize, int64_t dstSize, int64_t first, int count);

// Every channel resized to height x width (the picture stretched to the new aspect ratio).
Picture resized(const Picture& image, int height, int width);

// The picture resized so that it covers height x width (its shorter side made
// round(min(height, width) / cropFraction), the other in proportion, rounded down, and neither
// below the target), then its centre height x width cut out: torchvision's Resize(S) followed by
// CenterCrop, the way ImageNet models are evaluated. Only the result is allocated: the resize is
// computed at the rows and columns the crop keeps. cropFraction is in (0, 1].
Picture centreCropped(const Picture& image, int height, int width, double cropFraction);

// The value of the picture's background in channel `channel`: the median of the pixels on its
// short sides, the whole border for a square (0 for the data set's black, a little more for a
// photo of a garment on a gray table, once made light-on-dark). The long sides are left out: a
// garment that fills the picture's longer dimension touches them along most of their length.
float backgroundValue(const Picture& image, int channel = 0);

// Resizes to height x width keeping the aspect ratio, as the data set frames its garments: the
// picture is centred on a canvas of the target's aspect ratio, padded on both sides of its
// shorter dimension with each channel's background (see backgroundValue), then resized bilinearly
// as resized() does. The canvas is not built: only the result is allocated, so a 20000 x 100
// panorama costs no 20000 x 20000 canvas. A picture of the target's aspect ratio is resized()
// unchanged, so the data set's own images are not touched. `background` is used for a gray picture.
Picture resizedToFit(const Picture& image, int height, int width, float background);
Picture resizedToFit(const Picture& image, int height, int width);  // background: backgroundValue(image, c)

}  // namespace convscope
