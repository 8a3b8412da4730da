// A square canvas to draw on with the mouse (or a pen): light strokes on black, like the data
// set's pictures. Every change is announced at once so the prediction can follow the pen;
// clear() and undo() work stroke by stroke.
#pragma once

#include <QImage>
#include <QWidget>

#include <vector>

namespace convscope::ui {

class DrawingCanvas : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kResolution = 280;  // ten canvas pixels per pixel of a 28 x 28 image
  // The data set's garments are filled shapes with thick parts: a trouser leg is 3.5 pixels wide
  // for a garment 28 pixels tall (median of the 1,000 test-set trousers, at 1/8 of the height;
  // quartiles 3 and 4). A garment drawn over 80 % of the canvas (224 pixels) then needs legs of
  // 224 / 8 = 28 canvas pixels: one stroke per leg gives a filled leg, as in the data set.
  static constexpr int kDefaultBrush = 28;

  explicit DrawingCanvas(QWidget* parent = nullptr);

  const QImage& picture() const { return picture_; }
  bool isEmpty() const { return empty_; }
  int brushSize() const { return brushSize_; }
  bool canUndo() const { return !undoStack_.empty(); }

  QSize sizeHint() const override { return {280, 280}; }
  QSize minimumSizeHint() const override { return {140, 140}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override { return width; }

 public slots:
  void setBrushSize(int canvasPixels);
  void clear();
  void undo();

 signals:
  void pictureChanged();  // while drawing, on every pen movement
  void strokeFinished();
  void undoAvailable(bool available);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  QRect canvasRect() const;  // where the picture is shown, in widget coordinates
  QPointF toPicture(const QPointF& widgetPoint) const;
  void pushUndo();
  void drawSegment(const QPointF& from, const QPointF& to);

  QImage picture_;
  std::vector<QImage> undoStack_;
  bool empty_ = true;
  bool drawing_ = false;
  QPointF lastPoint_;
  int brushSize_ = kDefaultBrush;
  static constexpr size_t kUndoDepth = 64;
};

}  // namespace convscope::ui
