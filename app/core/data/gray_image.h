// A single-channel picture with values in [0, 1], the form every input source (data set, image
// file, drawing) is brought to before it becomes a row of the network's input batch.
#pragma once

#include <cstddef>
#include <vector>

namespace convscope {

struct GrayImage {
  int height = 0;
  int width = 0;
  std::vector<float> pixels;  // row-major, height * width

  float at(int y, int x) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
};

// Bilinear resampling with half-pixel centres, computed in float exactly as PyTorch's
// F.interpolate(mode='bilinear', align_corners=False) and OpenCV's INTER_LINEAR do, so that an
// image upsampled here matches the one the model was trained on.
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

GrayImage resized(const GrayImage& image, int height, int width);

// The value of the picture's background: the median of the pixels on its short sides, the whole
// border for a square (0 for the data set's black, a little more for a photo of a garment on a
// gray table, once made light-on-dark). The long sides are left out: a garment that fills the
// picture's longer dimension touches them along most of their length.
float backgroundValue(const GrayImage& image);

// Resizes to height x width keeping the aspect ratio, as the data set frames its garments: the
// picture is centred on a canvas of the target's aspect ratio, padded on both sides of its
// shorter dimension with `background` (see backgroundValue), then resized bilinearly as
// resized() does. The canvas is not built: only the result is allocated, so a 20000 x 100
// panorama costs no 20000 x 20000 canvas. A picture of the target's aspect ratio is resized() unchanged, so the data
// set's own images are not touched. Every input path (image files in the CLI and the window,
// drawings) goes through this.
GrayImage resizedToFit(const GrayImage& image, int height, int width, float background);
GrayImage resizedToFit(const GrayImage& image, int height, int width);  // background: backgroundValue(image)

}  // namespace convscope
