#include "ui/input/dataset_model.h"

#include <QPainter>

#include <algorithm>

namespace convscope::ui {

DatasetModel::DatasetModel(QObject* parent) : QAbstractListModel(parent) {}

void DatasetModel::setImageSet(std::shared_ptr<const ImageSet> images) {
  beginResetModel();
  images_ = std::move(images);
  thumbnails_.clear();
  classFilter_ = -1;
  rebuildRows();
  endResetModel();
}

void DatasetModel::setClassFilter(int label) {
  if (label == classFilter_) return;
  beginResetModel();
  classFilter_ = label;
  rebuildRows();
  endResetModel();
}

void DatasetModel::rebuildRows() {
  rows_.clear();
  if (!images_) return;
  rows_.reserve(static_cast<size_t>(images_->count()));
  for (int i = 0; i < images_->count(); ++i)
    if (classFilter_ < 0 || (images_->hasLabels() && images_->label(i) == classFilter_)) rows_.push_back(i);
}

void DatasetModel::setThumbnailWidth(int width) {
  width = std::max(width, static_cast<int>(kThumbnailSize));
  if (width == thumbnailWidth_) return;
  thumbnailWidth_ = width;
  thumbnails_.clear();
  if (rowCount() > 0) emit dataChanged(index(0), index(rowCount() - 1), {Qt::DecorationRole});
}

int DatasetModel::rowOfImage(int imageIndex) const {
  const auto it = std::lower_bound(rows_.begin(), rows_.end(), imageIndex);
  return it != rows_.end() && *it == imageIndex ? static_cast<int>(it - rows_.begin()) : -1;
}

int DatasetModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QImage DatasetModel::toQImage(const Picture& image) {
  const auto byte = [](float v) { return static_cast<uchar>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); };
  if (image.channels == 3) {  // the photos of a test set in class subfolders, for a colour model
    QImage result(image.width, image.height, QImage::Format_RGB888);
    for (int y = 0; y < image.height; ++y) {
      uchar* row = result.scanLine(y);
      for (int x = 0; x < image.width; ++x)
        for (int c = 0; c < 3; ++c) row[3 * x + c] = byte(image.at(c, y, x));
    }
    return result;
  }
  QImage result(image.width, image.height, QImage::Format_Grayscale8);
  for (int y = 0; y < image.height; ++y) {
    uchar* row = result.scanLine(y);
    for (int x = 0; x < image.width; ++x) row[x] = byte(image.at(y, x));
  }
  return result;
}

QVariant DatasetModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const int image = rows_[static_cast<size_t>(index.row())];
  const int label = images_->hasLabels() ? images_->label(image) : ImageSet::kNoLabel;
  const auto& names = images_->classNames();
  const QString className = label >= 0 && label < static_cast<int>(names.size())
                                ? QString::fromStdString(names[static_cast<size_t>(label)])
                                : tr("unlabelled");
  switch (role) {
    case Qt::DisplayRole:
      return className;
    case Qt::ToolTipRole:
      return tr("Test image #%1: %2").arg(image).arg(className);
    case Qt::DecorationRole: {
      if (QPixmap* cached = thumbnails_.object(image)) return *cached;
      auto* pixmap = new QPixmap(thumbnailWidth_, kThumbnailSize);
      pixmap->fill(Qt::transparent);
      QPainter painter(pixmap);
      painter.drawImage(QRect((thumbnailWidth_ - kThumbnailSize) / 2, 0, kThumbnailSize, kThumbnailSize),
                        toQImage(images_->image(image)));  // scaled without smoothing: crisp pixels
      painter.end();
      const QPixmap copy = *pixmap;
      thumbnails_.insert(image, pixmap);
      return copy;
    }
    case kImageIndexRole:
      return image;
    case kLabelRole:
      return label;
    default:
      return {};
  }
}

}  // namespace convscope::ui
