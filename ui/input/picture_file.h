// A picture file as an input: decoded by the core and turned light on dark when it is a dark
// drawing on a light background, by the rule `classify --images` uses too (loadPictureForDataSet).
#pragma once

#include <QString>

#include "ui/inference/input_image.h"

namespace convscope::ui {

// Throws convscope::Error naming the file when it is missing, not an image, or unsupported.
InputImage loadPictureFile(const QString& path);

}  // namespace convscope::ui
