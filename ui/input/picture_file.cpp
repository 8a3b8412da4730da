#include "ui/input/picture_file.h"

#include <QFileInfo>
#include <QObject>

#include "app/core/data/image_file.h"

namespace convscope::ui {

bool hasLightBackground(const GrayImage& image) {
  if (image.width == 0 || image.height == 0) return false;
  double border = 0.0;
  int count = 0;
  for (int x = 0; x < image.width; ++x) border += image.at(0, x) + image.at(image.height - 1, x), count += 2;
  for (int y = 0; y < image.height; ++y) border += image.at(y, 0) + image.at(y, image.width - 1), count += 2;
  return border / count > 0.5;
}

InputImage loadPictureFile(const QString& path) {
  InputImage picture;
  picture.image = loadImageFile(path.toStdString(), false);
  const bool invert = hasLightBackground(picture.image);
  if (invert)
    for (float& v : picture.image.pixels) v = 1.0f - v;
  picture.description =
      QFileInfo(path).fileName() + (invert ? QObject::tr(" (inverted: light background)") : QString());
  return picture;
}

}  // namespace convscope::ui
