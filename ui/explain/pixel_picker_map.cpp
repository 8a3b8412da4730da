#include "ui/explain/pixel_picker_map.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace convscope::ui {

PixelPickerMap::PixelPickerMap(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);  // the arrow keys step the window
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setToolTip(tr("Click a pixel to see its arithmetic; the arrow keys step the window across the map"));
}

void PixelPickerMap::setMap(const QImage& image) {
  // A map of another size (another layer or model) starts in its middle, where the picture is:
  // its corners are usually background, all zeros.
  if (image.size() != image_.size()) {
    y_ = image.height() / 2;
    x_ = image.width() / 2;
  }
  image_ = image;
  update();
}

void PixelPickerMap::clearMap() {
  image_ = QImage();
  update();
}

void PixelPickerMap::pick(int y, int x) {
  if (image_.isNull()) return;
  y_ = std::clamp(y, 0, image_.height() - 1);
  x_ = std::clamp(x, 0, image_.width() - 1);
  update();
  emit pixelPicked(y_, x_);
}

QRect PixelPickerMap::mapRect() const {
  if (image_.isNull()) return {};
  // Whole screen pixels per cell, so every cell is the same size and the outline sits on it.
  const int cell = std::max(1, std::min((width() - 8) / image_.width(), (height() - 8) / image_.height()));
  const QSize size(cell * image_.width(), cell * image_.height());
  return QRect(QPoint((width() - size.width()) / 2, (height() - size.height()) / 2), size);
}

QPoint PixelPickerMap::pointOf(int y, int x) const {
  const QRect r = mapRect();
  if (r.isEmpty()) return {};
  const int cell = r.width() / image_.width();
  return r.topLeft() + QPoint(x * cell + cell / 2, y * cell + cell / 2);
}

void PixelPickerMap::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  if (image_.isNull()) return;
  const QRect r = mapRect();
  painter.drawImage(r, image_);
  const int cell = r.width() / image_.width();
  const QRect picked(r.topLeft() + QPoint(x_ * cell, y_ * cell), QSize(cell, cell));
  // Two outlines, black inside white, so the pick shows on dark and on light cells alike.
  painter.setPen(QPen(Qt::white, 3));
  painter.drawRect(picked.adjusted(-2, -2, 1, 1));
  painter.setPen(QPen(Qt::black, 1));
  painter.drawRect(picked.adjusted(-1, -1, 0, 0));
  if (hasFocus()) {
    painter.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DashLine));
    painter.drawRect(r.adjusted(-3, -3, 2, 2));
  }
}

void PixelPickerMap::mousePressEvent(QMouseEvent* event) {
  const QRect r = mapRect();
  const QPoint p = event->position().toPoint();
  if (r.isEmpty() || !r.contains(p)) return;
  const int cell = r.width() / image_.width();
  setFocus(Qt::MouseFocusReason);
  pick((p.y() - r.top()) / cell, (p.x() - r.left()) / cell);
}

void PixelPickerMap::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Left:
      pick(y_, x_ - 1);
      break;
    case Qt::Key_Right:
      pick(y_, x_ + 1);
      break;
    case Qt::Key_Up:
      pick(y_ - 1, x_);
      break;
    case Qt::Key_Down:
      pick(y_ + 1, x_);
      break;
    default:
      QWidget::keyPressEvent(event);
  }
}

}  // namespace convscope::ui
