#include "ui/explain/kernel_grid_widget.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "ui/common/presentation_mode.h"
#include "ui/maps/colour_map.h"

namespace convscope::ui {
namespace {
constexpr int kSpacing = 4;  // between tiles
}

KernelGridWidget::KernelGridWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void KernelGridWidget::setWeights(const Tensor& weights) {
  weights_ = weights;
  filters_ = weights.rank() == 4 ? static_cast<int>(weights.dim(0)) : 0;
  inputs_ = weights.rank() == 4 ? static_cast<int>(weights.dim(1)) : 0;
  kernelHeight_ = weights.rank() == 4 ? static_cast<int>(weights.dim(2)) : 0;
  kernelWidth_ = weights.rank() == 4 ? static_cast<int>(weights.dim(3)) : 0;
  extent_ = 0.0f;
  for (float w : weights.values()) extent_ = std::max(extent_, std::abs(w));
  if (!(extent_ > 0.0f)) extent_ = 1.0f;  // all zero: one colour, no division by 0
  updateGeometry();
  update();
}

int KernelGridWidget::columns() const {
  return transposed() ? filters_ : inputs_;
}

int KernelGridWidget::cellSize() const {
  // Tiles at least 40 pixels wide (56 on a projector) whatever the kernel, up to twice that where
  // the width allows; at least 3 pixels a cell so every weight stays visible.
  const int smallest = presentationMode() ? 56 : 40;
  int tile = smallest;
  if (availableWidth_ > 0 && columns() > 0)
    tile = std::clamp((availableWidth_ - labelWidth()) / columns() - kSpacing, smallest, 2 * smallest);
  return std::max(3, tile / std::max(1, kernelWidth_));
}

void KernelGridWidget::setAvailableWidth(int pixels) {
  if (pixels == availableWidth_) return;
  availableWidth_ = pixels;
  updateGeometry();
  update();
}

int KernelGridWidget::labelWidth() const {
  return fontMetrics().horizontalAdvance(transposed() ? tr("in 0") : tr("filter 00")) + 8;
}

int KernelGridWidget::headerHeight() const {
  return fontMetrics().height() + 4;
}

QRect KernelGridWidget::tileRect(int filter, int channel) const {
  const int cell = cellSize();
  const int w = kernelWidth_ * cell, h = kernelHeight_ * cell;
  // At least as wide as the column's label, so "in 10" does not run into "in 11".
  const int column = std::max(w, fontMetrics().horizontalAdvance(transposed() ? tr("f 00") : tr("in 00"))) + kSpacing;
  const int col = transposed() ? filter : channel, row = transposed() ? channel : filter;
  return {labelWidth() + col * column, headerHeight() + row * (h + kSpacing), w, h};
}

QSize KernelGridWidget::sizeHint() const {
  if (filters_ == 0) return {10, 10};
  const QRect last = tileRect(filters_ - 1, inputs_ - 1);  // the bottom-right tile either way
  return {last.right() + kSpacing + 1, last.bottom() + kSpacing + 1};
}

QPoint KernelGridWidget::pointOf(int filter, int channel, int ky, int kx) const {
  const int cell = cellSize();
  return tileRect(filter, channel).topLeft() + QPoint(kx * cell + cell / 2, ky * cell + cell / 2);
}

bool KernelGridWidget::hit(const QPoint& point, int* filter, int* channel, int* ky, int* kx) const {
  for (int f = 0; f < filters_; ++f)
    for (int c = 0; c < inputs_; ++c) {
      const QRect r = tileRect(f, c);
      if (!r.contains(point)) continue;
      *filter = f;
      *channel = c;
      *ky = (point.y() - r.top()) / cellSize();
      *kx = (point.x() - r.left()) / cellSize();
      return true;
    }
  return false;
}

QString KernelGridWidget::describeAt(const QPoint& point) const {
  int f = 0, c = 0, ky = 0, kx = 0;
  if (!hit(point, &f, &c, &ky, &kx)) return {};
  const float w = weights_[((int64_t{f} * inputs_ + c) * kernelHeight_ + ky) * kernelWidth_ + kx];
  return tr("filter %1, input channel %2, kernel row %3, column %4: weight %5")
      .arg(f)
      .arg(c)
      .arg(ky)
      .arg(kx)
      .arg(QString::number(w, 'g', 5));
}

void KernelGridWidget::paintEvent(QPaintEvent*) {
  if (filters_ == 0) return;
  QPainter painter(this);
  painter.setPen(palette().color(QPalette::WindowText));
  for (int col = 0; col < columns(); ++col) {
    const QRect r = transposed() ? tileRect(col, 0) : tileRect(0, col);
    painter.drawText(QRect(r.left(), 0, r.width() + kSpacing, headerHeight()), Qt::AlignLeft | Qt::AlignVCenter,
                     transposed() ? tr("f %1").arg(col) : tr("in %1").arg(col));
  }
  const ValueRange range{-extent_, extent_};
  const int plane = kernelHeight_ * kernelWidth_;
  if (transposed()) {
    const QRect first = tileRect(0, 0);
    painter.drawText(QRect(0, first.top(), labelWidth() - 6, first.height()), Qt::AlignRight | Qt::AlignVCenter,
                     tr("in 0"));
  }
  for (int f = 0; f < filters_; ++f) {
    const QRect first = tileRect(f, 0);
    painter.setPen(palette().color(QPalette::WindowText));
    if (!transposed())
      painter.drawText(QRect(0, first.top(), labelWidth() - 6, first.height()), Qt::AlignRight | Qt::AlignVCenter,
                       tr("filter %1").arg(f));
    for (int c = 0; c < inputs_; ++c) {
      const float* kernel = weights_.data() + (int64_t{f} * inputs_ + c) * plane;
      const QRect r = tileRect(f, c);
      painter.drawImage(r, mapImage(kernel, kernelHeight_, kernelWidth_, range, ColourMap::Diverging));
      painter.setPen(QColor(150, 150, 150));
      painter.drawRect(r.adjusted(-1, -1, 0, 0));
    }
  }
}

void KernelGridWidget::mouseMoveEvent(QMouseEvent* event) {
  const QString text = describeAt(event->position().toPoint());
  setToolTip(text);
  if (!text.isEmpty()) emit hovered(text);
}

void KernelGridWidget::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) updateGeometry();
  QWidget::changeEvent(event);
}

}  // namespace convscope::ui
