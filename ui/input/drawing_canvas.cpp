#include "ui/input/drawing_canvas.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

#include "ui/input/drawing_preprocessing.h"

namespace convscope::ui {

DrawingCanvas::DrawingCanvas(QWidget* parent)
    : QWidget(parent), picture_(kResolution, kResolution, QImage::Format_RGB32) {
  picture_.fill(Qt::black);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setCursor(Qt::CrossCursor);
  QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
  setToolTip(
      tr("Draw a piece of clothing as a filled shape (colour it in, as the data set's garments are, "
         "not only its outline); the prediction follows your pen"));
}

void DrawingCanvas::setBrushSize(int canvasPixels) {
  brushSize_ = std::clamp(canvasPixels, 2, 80);
}

void DrawingCanvas::clear() {
  if (empty_) return;
  pushUndo();
  picture_.fill(Qt::black);
  empty_ = true;
  update();
  emit pictureChanged();
  emit strokeFinished();
}

void DrawingCanvas::undo() {
  if (undoStack_.empty()) return;
  picture_ = std::move(undoStack_.back());
  undoStack_.pop_back();
  empty_ = inkBounds(picture_.convertToFormat(QImage::Format_Grayscale8)).isNull();
  update();
  emit undoAvailable(!undoStack_.empty());
  emit pictureChanged();
  emit strokeFinished();
}

void DrawingCanvas::pushUndo() {
  if (undoStack_.size() == kUndoDepth) undoStack_.erase(undoStack_.begin());
  undoStack_.push_back(picture_);
  emit undoAvailable(true);
}

QRect DrawingCanvas::canvasRect() const {
  const int side = std::min(width(), height());
  return QRect((width() - side) / 2, (height() - side) / 2, side, side);
}

QPointF DrawingCanvas::toPicture(const QPointF& widgetPoint) const {
  const QRect area = canvasRect();
  const double scale = static_cast<double>(kResolution) / std::max(1, area.width());
  return (widgetPoint - area.topLeft()) * scale;
}

void DrawingCanvas::drawSegment(const QPointF& from, const QPointF& to) {
  QPainter painter(&picture_);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(Qt::white, brushSize_, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  if (from == to)
    painter.drawPoint(from);
  else
    painter.drawLine(from, to);
  empty_ = false;
}

void DrawingCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  pushUndo();
  drawing_ = true;
  lastPoint_ = toPicture(event->position());
  drawSegment(lastPoint_, lastPoint_);
  update();
  emit pictureChanged();
}

void DrawingCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (!drawing_) return;
  const QPointF point = toPicture(event->position());
  drawSegment(lastPoint_, point);
  lastPoint_ = point;
  update();
  emit pictureChanged();
}

void DrawingCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !drawing_) return;
  drawing_ = false;
  emit strokeFinished();
}

void DrawingCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Window));
  const QRect area = canvasRect();
  painter.setRenderHint(QPainter::SmoothPixmapTransform);
  painter.drawImage(area, picture_);
  // A faint 28 x 28 grid: the resolution the data set's pictures have.
  painter.setPen(QColor(255, 255, 255, 18));
  for (int i = 1; i < 28; ++i) {
    const int x = area.left() + area.width() * i / 28, y = area.top() + area.height() * i / 28;
    painter.drawLine(x, area.top(), x, area.bottom());
    painter.drawLine(area.left(), y, area.right(), y);
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(area.adjusted(0, 0, -1, -1));
  if (empty_) {
    painter.setPen(QColor(200, 200, 200));
    painter.drawText(area.adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
                     tr("Draw here: a shirt, a shoe, a bag ...\nas a filled shape, like the data set's garments "
                        "(colour it in, not just the outline)"));
  }
}

}  // namespace convscope::ui
