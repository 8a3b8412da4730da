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
void resizeBilinearHalfPixel(const float* src, int srcHeight, int srcWidth, float* dst,
                             int dstHeight, int dstWidth);

GrayImage resized(const GrayImage& image, int height, int width);

}  // namespace convscope
