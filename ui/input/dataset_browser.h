// Browses the test set: a scrolling grid of thumbnails with their labels, a class filter and a
// "go to image number" box (Enter jumps and hands the keys back to the grid). Choosing an image
// (click, arrow keys, next/previous) announces it. A picture from elsewhere (an image file)
// clears the selection and says what is shown instead.
#pragma once

#include <QWidget>

#include <memory>

#include "app/core/data/image_set.h"

class QComboBox;
class QLabel;
class QListView;
class QSpinBox;

namespace convscope::ui {

class DatasetModel;

class DatasetBrowser : public QWidget {
  Q_OBJECT

 public:
  explicit DatasetBrowser(QWidget* parent = nullptr);

  void setImageSet(std::shared_ptr<const ImageSet> images);
  // Why there is no test set (the loader's error): shown in place of the image count.
  void setUnavailableReason(const QString& reason);
  QString statusText() const;                    // the line under the grid: the count, or why there are no images
  int currentImage() const { return current_; }  // -1 when none
  int classFilter() const;
  QListView* view() const { return view_; }
  QSpinBox* goToBox() const { return goTo_; }
  // What the note over the grid says while the picture is not a test image; empty otherwise.
  QString outsidePictureNote() const;

 public slots:
  // Selects (and scrolls to) test image `index`; false when there is no such image.
  bool selectImage(int index);
  void setClassFilter(int label);  // -1: all classes
  void selectNext();
  void selectPrevious();
  // The picture shown is not from the test set (`name`: an image file, or a video's when `video`):
  // no thumbnail stays highlighted, and a note says what is shown. Choosing a test image again
  // removes it.
  void showOutsidePicture(const QString& name, bool video = false);

 signals:
  void imageChosen(int index);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void updateGrid();
  void step(int delta);
  void rowChanged(int row);
  void updateCount();

  DatasetModel* model_;
  QListView* view_;
  QComboBox* filter_;
  QSpinBox* goTo_;
  QLabel* count_;
  QString unavailableReason_;
  QLabel* outsideNote_;
  int current_ = -1;
};

}  // namespace convscope::ui
