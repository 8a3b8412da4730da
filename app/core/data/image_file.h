// Picture files (PNG, JPEG, BMP, PNM, TIFF, WebP) decoded through OpenCV when the build has it,
// to one gray channel or to R, G, B, with values in [0, 1]: 8- and 16-bit files alike, CMYK
// JPEGs converted to RGB, an alpha channel dropped (as torchvision's loader, Pillow's
// convert("RGB"), drops it), a gray file given as three equal channels where colour is asked for.
// Resizing to the model's input happens later, through
// the same bilinear code as the data set, so every input path is preprocessed identically.
// The picture's size is read from the file's own header before anything is decoded, and one
// larger than kMaxImagePixels is refused: a PNG of under 1 MB can decode to 30000 x 30000.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "app/core/data/picture.h"
#include "app/core/data/preprocessing.h"

namespace cv {
class Mat;
}

namespace convscope {

// 50 megapixels: more than any camera picture needs for a 224 x 224 model, and small enough that
// decoding one (8-bit colour, then float) stays under 1 GB of memory.
constexpr uint64_t kMaxImagePixels = 50'000'000;
// Image files larger than this are refused before they are read (50 MP of uncompressed RGBA).
constexpr uint64_t kMaxImageFileBytes = uint64_t{256} << 20;

// True when this build can decode image files.
bool imageFilesSupported();

// Throws convscope::Error naming the file when it is missing or no regular file, not an image,
// of a format ConvScope does not read, or larger than kMaxImagePixels.
// `channels` is 1 (gray, decoded as OpenCV's IMREAD_GRAYSCALE does: the course's models always
// saw that) or 3 (R, G, B planes). `invert` turns dark-on-light pictures into the light-on-dark
// form of the data set.
Picture loadImageFile(const std::filesystem::path& path, bool invert, int channels = 1);

// What loadImageFile and the video frames (video_source.h) share, defined only in builds with
// OpenCV (CONVSCOPE_HAVE_OPENCV), the only code that has a cv::Mat to give:
// A picture decoded by OpenCV -- `channels` (1, or 3 in OpenCV's B, G, R order) interleaved, 8
// or 16 bits or float -- as a Picture of gray or R, G, B planes in [0, 1]: 8-bit values as the
// data set's x / 255 in float, 16-bit ones over 65535, floats clamped. Inverted when `invert`.
// Throws convscope::Error naming `name` when `decoded` has another channel count.
Picture pictureOfDecoded(const cv::Mat& decoded, int channels, bool invert, const std::string& name);
// The still-picture format a file's first bytes announce ("PNG", "JPEG", "BMP", "TIFF", "WebP",
// "PNM"), or empty: a picture renamed .mp4 is refused as a video rather than shown as one frame.
std::string stillPictureFormatOf(const std::string& head);

// True when the border of the picture (its outermost rows and columns, all channels) averages
// above 0.5: a dark object on a light background.
bool hasLightBackground(const Picture& image);

struct DataSetPicture {
  Picture image;          // light on dark, as the model was trained on
  bool inverted = false;  // whether it was inverted to get there
};

// loadImageFile, then inverted by `inversion`'s rule. Throws as loadImageFile does.
DataSetPicture loadPictureForDataSet(const std::filesystem::path& path, PictureInversion inversion, int channels = 1);

// `picture` inverted by `inversion`'s rule.
DataSetPicture invertedByRule(Picture picture, PictureInversion inversion);

}  // namespace convscope
