// The drawing tab: the canvas with its brush size, clear and undo, and a preview of the picture
// as the data set would hold it. It hands out the framed 28 x 28 picture on every change.
#pragma once

#include <QWidget>

#include "app/core/data/gray_image.h"

class QLabel;
class QSlider;

namespace convscope::ui {

class DrawingCanvas;

class DrawingPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DrawingPanel(QWidget* parent = nullptr);

  DrawingCanvas* canvas() const { return canvas_; }
  GrayImage framedPicture() const;  // what pictureChanged() hands out
  int brushSize() const;
  void setBrushSize(int canvasPixels);

 signals:
  void pictureChanged(const convscope::GrayImage& framed);

 private:
  void updatePreview(const GrayImage& framed);

  DrawingCanvas* canvas_;
  QSlider* brush_;
  QLabel* preview_;
};

}  // namespace convscope::ui
