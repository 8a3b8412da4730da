// One output map of a conv layer, drawn large, on which the student picks the pixel whose
// arithmetic is shown: a click picks it, the arrow keys step the window across the map. The
// picked pixel is outlined; the map keeps its aspect ratio whatever the widget's size.
#pragma once

#include <QImage>
#include <QWidget>

namespace convscope::ui {

class PixelPickerMap : public QWidget {
  Q_OBJECT

 public:
  explicit PixelPickerMap(QWidget* parent = nullptr);

  // A height x width map drawn as `image`; the pick stays, unless the map's size changed.
  void setMap(const QImage& image);
  void clearMap();
  int mapHeight() const { return image_.height(); }
  int mapWidth() const { return image_.width(); }
  int pickedY() const { return y_; }
  int pickedX() const { return x_; }
  // Picks (y, x), clamped to the map, and announces it.
  void pick(int y, int x);
  // The centre of cell (y, x) in widget coordinates: for tests and tours.
  QPoint pointOf(int y, int x) const;

  QSize sizeHint() const override { return {320, 320}; }
  QSize minimumSizeHint() const override { return {120, 120}; }

 signals:
  void pixelPicked(int y, int x);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  QRect mapRect() const;

  QImage image_;
  int y_ = 0;
  int x_ = 0;
};

}  // namespace convscope::ui
