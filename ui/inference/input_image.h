// One picture to classify, whatever it came from: a test-set image, an image file or a drawing.
// It keeps its own size; the live-inference job resizes it to the model's input with the core's
// bilinear resampling, exactly as the data set's images are.
#pragma once

#include <QString>

#include "app/core/data/image_set.h"
#include "app/core/data/picture.h"

namespace convscope::ui {

struct InputImage {
  Picture image;                   // values in [0, 1], light object on a dark background
  int label = ImageSet::kNoLabel;  // the true class when known
  int testIndex = -1;              // position in the test set, or -1
  QString description;             // "Test image #17", "shirt.png", "Drawing"
  QString file;                    // the image file it was opened from: a colour model decodes it in colour
};

}  // namespace convscope::ui
