// A picture file as an input: decoded by the core (loadImageFile, OpenCV), and turned light on
// dark when it is a dark drawing on a light background, as photos and scans usually are, since
// the data set's garments are light on black.
#pragma once

#include <QString>

#include "ui/inference/input_image.h"

namespace convscope::ui {

// Throws convscope::Error naming the file when it is missing, not an image, or unsupported.
InputImage loadPictureFile(const QString& path);

// True when the border of the picture is mostly light: a dark object on a light background.
bool hasLightBackground(const GrayImage& image);

}  // namespace convscope::ui
