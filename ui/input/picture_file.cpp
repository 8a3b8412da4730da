#include "ui/input/picture_file.h"

#include <QFileInfo>
#include <QObject>

#include "app/core/data/image_file.h"

namespace convscope::ui {

InputImage loadPictureFile(const QString& path) {
  const DataSetPicture loaded = loadPictureForDataSet(path.toStdString(), PictureInversion::Automatic);
  InputImage picture;
  picture.image = loaded.image;
  picture.file = path;
  picture.description =
      QFileInfo(path).fileName() + (loaded.inverted ? QObject::tr(" (inverted: light background)") : QString());
  return picture;
}

}  // namespace convscope::ui
