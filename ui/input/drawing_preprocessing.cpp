#include "ui/input/drawing_preprocessing.h"

#include <algorithm>

namespace convscope::ui {

QRect inkBounds(const QImage& gray8, int threshold) {
  int left = gray8.width(), right = -1, top = gray8.height(), bottom = -1;
  for (int y = 0; y < gray8.height(); ++y) {
    const uchar* row = gray8.constScanLine(y);
    for (int x = 0; x < gray8.width(); ++x)
      if (row[x] > threshold) {
        left = std::min(left, x);
        right = std::max(right, x);
        top = std::min(top, y);
        bottom = std::max(bottom, y);
      }
  }
  if (right < 0) return {};
  return QRect(QPoint(left, top), QPoint(right, bottom));
}

Picture frameDrawing(const QImage& drawing, int frame) {
  Picture result{frame, frame, std::vector<float>(static_cast<size_t>(frame) * frame, 0.0f)};
  const QImage gray = drawing.convertToFormat(QImage::Format_Grayscale8);
  const QRect box = inkBounds(gray);
  if (box.isNull()) return result;

  // The box, centred on a square black canvas, so scaling keeps the aspect ratio.
  const int side = std::max(box.width(), box.height());
  QImage square(side, side, QImage::Format_Grayscale8);
  square.fill(0);
  const int offsetX = (side - box.width()) / 2, offsetY = (side - box.height()) / 2;
  for (int y = 0; y < box.height(); ++y)
    std::copy_n(gray.constScanLine(box.top() + y) + box.left(), box.width(), square.scanLine(offsetY + y) + offsetX);
  // Qt's smooth downscaling averages the source pixels under each target pixel.
  const QImage small = square.scaled(frame, frame, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)
                           .convertToFormat(QImage::Format_Grayscale8);
  for (int y = 0; y < frame; ++y) {
    const uchar* row = small.constScanLine(y);
    for (int x = 0; x < frame; ++x) result.pixels[static_cast<size_t>(y) * frame + x] = row[x] / 255.0f;
  }
  return result;
}

}  // namespace convscope::ui
