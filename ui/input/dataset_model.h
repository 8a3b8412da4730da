// The test set as a list model: one row per image (all 10,000, or those of one class), shown as
// a thumbnail with its class name. Thumbnails are made when the view first asks for them and a
// few thousand are cached, so scrolling through the whole set stays light.
#pragma once

#include <QAbstractListModel>
#include <QCache>
#include <QPixmap>

#include <memory>
#include <vector>

#include "app/core/data/image_set.h"

namespace convscope::ui {

class DatasetModel : public QAbstractListModel {
  Q_OBJECT

 public:
  static constexpr int kImageIndexRole = Qt::UserRole + 1;
  static constexpr int kLabelRole = Qt::UserRole + 2;
  static constexpr int kThumbnailSize = 56;

  explicit DatasetModel(QObject* parent = nullptr);

  void setImageSet(std::shared_ptr<const ImageSet> images);
  const std::shared_ptr<const ImageSet>& imageSet() const { return images_; }

  // Shows only the images of class `label`; -1 shows all.
  void setClassFilter(int label);
  int classFilter() const { return classFilter_; }

  // Thumbnails are centred in pictures this wide: the view lets a label be as wide as its picture.
  void setThumbnailWidth(int width);

  int imageIndexAt(int row) const { return rows_.at(static_cast<size_t>(row)); }
  int rowOfImage(int imageIndex) const;  // -1 when filtered out

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

  static QImage toQImage(const Picture& image);

 private:
  void rebuildRows();

  std::shared_ptr<const ImageSet> images_;
  int classFilter_ = -1;
  int thumbnailWidth_ = kThumbnailSize;
  std::vector<int> rows_;
  mutable QCache<int, QPixmap> thumbnails_{4000};
};

}  // namespace convscope::ui
