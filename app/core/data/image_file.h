// Picture files (PNG, JPEG, BMP, ...) decoded through OpenCV when the build has it, converted to
// one gray channel in [0, 1]. Resizing to the model's input happens later, through the same
// bilinear code as the data set, so every input path is preprocessed identically.
#pragma once

#include <filesystem>

#include "data/gray_image.h"

namespace convscope {

// True when this build can decode image files.
bool imageFilesSupported();

// Throws convscope::Error naming the file when it is missing, not an image, or unsupported.
// `invert` turns dark-on-light pictures into the light-on-dark form of the data set.
GrayImage loadImageFile(const std::filesystem::path& path, bool invert);

}  // namespace convscope
