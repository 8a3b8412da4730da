// Brings a drawing to the form of a Fashion-MNIST image, so the network sees it the way it saw
// its training data: the strokes' bounding box is cut out, centred, and scaled (area-averaged,
// which keeps thin strokes visible) until its longer side spans the whole frame, as the data
// set's garments do. The result is frame x frame; the live-inference job then resizes it to the
// model's input with the core's bilinear resized(), exactly as the data set's images.
#pragma once

#include <QImage>

#include "app/core/data/picture.h"

namespace convscope::ui {

// `drawing`: light strokes on black, any size and format. An empty drawing gives a black frame.
Picture frameDrawing(const QImage& drawing, int frame = 28);

// The bounding box of the pixels brighter than `threshold` (0..255); null when there are none.
QRect inkBounds(const QImage& gray8, int threshold = 8);

}  // namespace convscope::ui
