// The drawing tab: the canvas with its brush size, clear and undo, and a preview of the picture
// as the data set would hold it. It hands out the framed 28 x 28 picture on every change.
#pragma once

#include <QWidget>

#include "app/core/data/picture.h"

class QLabel;
class QSlider;

namespace convscope::ui {

class DrawingCanvas;

class DrawingPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DrawingPanel(QWidget* parent = nullptr);

  DrawingCanvas* canvas() const { return canvas_; }
  Picture framedPicture() const;  // what pictureChanged() hands out
  int brushSize() const;
  void setBrushSize(int canvasPixels);

 signals:
  void pictureChanged(const convscope::Picture& framed);

 private:
  void updatePreview(const Picture& framed);

  DrawingCanvas* canvas_;
  QSlider* brush_;
  QLabel* preview_;
};

}  // namespace convscope::ui
