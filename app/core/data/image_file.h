// Picture files (PNG, JPEG, BMP, PNM, TIFF, WebP) decoded through OpenCV when the build has it,
// converted to one gray channel in [0, 1]. Resizing to the model's input happens later, through
// the same bilinear code as the data set, so every input path is preprocessed identically.
// The picture's size is read from the file's own header before anything is decoded, and one
// larger than kMaxImagePixels is refused: a PNG of under 1 MB can decode to 30000 x 30000.
#pragma once

#include <cstdint>
#include <filesystem>

#include "app/core/data/gray_image.h"

namespace convscope {

// 50 megapixels: more than any camera picture needs for a 28 x 28 or 48 x 48 model, and small
// enough that decoding one (gray, then float) stays well under 1 GB of memory.
constexpr uint64_t kMaxImagePixels = 50'000'000;
// Image files larger than this are refused before they are read (50 MP of uncompressed RGBA).
constexpr uint64_t kMaxImageFileBytes = uint64_t{256} << 20;

// True when this build can decode image files.
bool imageFilesSupported();

// Throws convscope::Error naming the file when it is missing or no regular file, not an image,
// of a format ConvScope does not read, or larger than kMaxImagePixels.
// `invert` turns dark-on-light pictures into the light-on-dark form of the data set.
GrayImage loadImageFile(const std::filesystem::path& path, bool invert);

// The data set's garments are light on black; photos and scans are mostly dark on light. One rule
// decides, for the window and the command line alike, whether a picture is inverted before a
// Fashion-MNIST model sees it.
enum class PictureInversion {
  Automatic,  // inverted when its border is mostly light (hasLightBackground): the default
  Always,     // classify --invert
  Never,      // classify --no-invert
};

// True when the border of the picture (its outermost rows and columns) averages above 0.5: a dark
// object on a light background.
bool hasLightBackground(const GrayImage& image);

struct DataSetPicture {
  GrayImage image;        // light on dark, as the model was trained on
  bool inverted = false;  // whether it was inverted to get there
};

// loadImageFile, then inverted by `inversion`'s rule. Throws as loadImageFile does.
DataSetPicture loadPictureForDataSet(const std::filesystem::path& path, PictureInversion inversion);

}  // namespace convscope
