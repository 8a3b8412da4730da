#include "ui/explain/conv_products_canvas.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "ui/maps/colour_map.h"

namespace convscope::ui {
namespace {

constexpr int kGap = 28;  // between the three grids, room for "×" and "="

double extentOf(const std::vector<double>& values) {
  double extent = 0.0;
  for (double v : values) extent = std::max(extent, std::abs(v));
  return extent > 0.0 ? extent : 1.0;
}

QColor signedColour(double value, double extent) {
  const QVector<QRgb>& table = colourTable(ColourMap::Diverging);
  const double t = std::clamp((value / extent + 1.0) / 2.0, 0.0, 1.0);
  return QColor(table[static_cast<int>(t * 255.0 + 0.5)]);
}

QString number(double value) {
  return QString::number(value, 'g', 6);
}

}  // namespace

ConvProductsCanvas::ConvProductsCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void ConvProductsCanvas::setBreakdown(const ConvPixelBreakdown& breakdown) {
  breakdown_ = breakdown;
  // One scale per kind of figure for all channels, so that a strong channel stands out.
  inputExtent_ = extentOf(breakdown.inputs);
  weightExtent_ = extentOf(breakdown.weights);
  productExtent_ = extentOf(breakdown.products);
  fitHeight();
  update();
}

void ConvProductsCanvas::clear() {
  breakdown_.reset();
  fitHeight();
  update();
}

int ConvProductsCanvas::labelWidth() const {
  const int last = breakdown_ ? breakdown_->problem.inChannels - 1 : 0;
  return fontMetrics().horizontalAdvance(tr("channel %1").arg(last)) + 10;
}

int ConvProductsCanvas::headerHeight() const {
  return fontMetrics().height() + 6;
}

int ConvProductsCanvas::cellSizeFor(int width) const {
  if (!breakdown_) return 16;
  // The channel's sum goes under its products, so the three grids share the whole width.
  const int available = width - labelWidth() - 2 * kGap - 8;
  const int cells = 3 * breakdown_->problem.kernelWidth;
  return std::clamp(available / std::max(1, cells), 10, 72);
}

int ConvProductsCanvas::cellSize() const {
  return cellSizeFor(width());
}

int ConvProductsCanvas::rowHeight(int cell) const {
  return breakdown_ ? cell * breakdown_->problem.kernelHeight + fontMetrics().height() + 12 : 0;
}

int ConvProductsCanvas::heightForWidth(int width) const {
  if (!breakdown_) return 40;
  return headerHeight() + breakdown_->problem.inChannels * rowHeight(cellSizeFor(width)) + 4;
}

QSize ConvProductsCanvas::sizeHint() const {
  return {640, heightForWidth(640)};
}

QRect ConvProductsCanvas::gridRect(int channel, Part part, int cell) const {
  const int kw = breakdown_->problem.kernelWidth, kh = breakdown_->problem.kernelHeight;
  const int left = labelWidth() + static_cast<int>(part) * (kw * cell + kGap);
  const int top = headerHeight() + channel * rowHeight(cell);
  return {left, top, kw * cell, kh * cell};
}

bool ConvProductsCanvas::hit(const QPoint& point, int* channel, int* ky, int* kx) const {
  if (!breakdown_) return false;
  const int cell = cellSize();
  for (int c = 0; c < breakdown_->problem.inChannels; ++c)
    for (Part part : {Input, Weight, Product}) {
      const QRect r = gridRect(c, part, cell);
      if (!r.contains(point)) continue;
      *channel = c;
      *ky = (point.y() - r.top()) / cell;
      *kx = (point.x() - r.left()) / cell;
      return true;
    }
  return false;
}

QString ConvProductsCanvas::describeTerm(int channel, int ky, int kx) const {
  if (!breakdown_) return {};
  const ConvPixelBreakdown& b = *breakdown_;
  const size_t t = static_cast<size_t>(b.termIndex(channel, ky, kx));
  const QString where = b.padding[t] ? tr("padding (outside the input)")
                                     : tr("input pixel x %1, y %2").arg(b.inputColumn(kx)).arg(b.inputRow(ky));
  return tr("channel %1, kernel row %2, column %3: %4\n%5 × %6 = %7")
      .arg(channel)
      .arg(ky)
      .arg(kx)
      .arg(where, number(b.inputs[t]), number(b.weights[t]), number(b.products[t]));
}

void ConvProductsCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing, false);
  const QColor text = palette().color(QPalette::WindowText);
  if (!breakdown_) return;
  const ConvPixelBreakdown& b = *breakdown_;
  const int cell = cellSize();

  painter.setPen(text);
  const QString titles[] = {tr("input patch"), tr("kernel weights"), tr("products")};
  for (Part part : {Input, Weight, Product}) {
    const QRect r = gridRect(0, part, cell);
    painter.drawText(QRect(r.left(), 0, r.width() + kGap, headerHeight()), Qt::AlignLeft | Qt::AlignVCenter,
                     titles[part]);
  }

  // Numbers go into the cells only where they fit: a smaller font than the labels', from the cell.
  QFont cellFont = font();
  cellFont.setPixelSize(std::max(7, cell / 3));
  const bool numbersFit = QFontMetrics(cellFont).horizontalAdvance("-0.00") <= cell - 2;

  for (int c = 0; c < b.problem.inChannels; ++c) {
    const QRect first = gridRect(c, Input, cell);
    painter.setPen(text);
    painter.setFont(font());
    painter.drawText(QRect(0, first.top(), labelWidth() - 6, first.height()), Qt::AlignRight | Qt::AlignVCenter,
                     tr("channel %1").arg(c));
    for (Part part : {Input, Weight, Product}) {
      const QRect grid = gridRect(c, part, cell);
      const std::vector<double>& values = part == Input ? b.inputs : part == Weight ? b.weights : b.products;
      const double extent = part == Input ? inputExtent_ : part == Weight ? weightExtent_ : productExtent_;
      for (int ky = 0; ky < b.problem.kernelHeight; ++ky)
        for (int kx = 0; kx < b.problem.kernelWidth; ++kx) {
          const size_t t = static_cast<size_t>(b.termIndex(c, ky, kx));
          const QRect r(grid.left() + kx * cell, grid.top() + ky * cell, cell, cell);
          const bool padded = part != Weight && b.padding[t];
          painter.fillRect(r, padded ? QColor(215, 215, 215) : signedColour(values[t], extent));
          if (padded) painter.fillRect(r, QBrush(QColor(150, 150, 150), Qt::BDiagPattern));
          if (numbersFit) {
            painter.setFont(cellFont);
            painter.setPen(Qt::black);  // the cells are light in the middle of the scale, dark only at its ends
            const double v = values[t];
            if (std::abs(v) > 0.6 * extent) painter.setPen(Qt::white);
            painter.drawText(r, Qt::AlignCenter, padded ? QString("0") : QString::number(v, 'f', 2));
          }
        }
      painter.setPen(QColor(120, 120, 120));
      painter.drawRect(grid.adjusted(0, 0, -1, -1));
    }
    painter.setFont(font());
    painter.setPen(text);
    const QRect weights = gridRect(c, Weight, cell), products = gridRect(c, Product, cell);
    painter.drawText(QRect(first.right(), first.top(), kGap, first.height()), Qt::AlignCenter, "×");
    painter.drawText(QRect(weights.right(), first.top(), kGap, first.height()), Qt::AlignCenter, "=");
    painter.drawText(
        QRect(first.left(), products.bottom() + 2, products.right() - first.left(), fontMetrics().height() + 4),
        Qt::AlignRight | Qt::AlignTop,
        tr("channel %1: Σ = %2").arg(c).arg(QString::number(b.channelSums[static_cast<size_t>(c)], 'g', 6)));
  }
}

bool ConvProductsCanvas::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    int c = 0, ky = 0, kx = 0;
    if (hit(help->pos(), &c, &ky, &kx))
      QToolTip::showText(help->globalPos(), describeTerm(c, ky, kx), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

void ConvProductsCanvas::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) fitHeight();  // presentation mode: larger labels
  QWidget::changeEvent(event);
}

void ConvProductsCanvas::resizeEvent(QResizeEvent* event) {
  // The height follows the cells, which follow the width; a scroll area asks only for the
  // minimum height, so that is where the height goes.
  fitHeight();
  QWidget::resizeEvent(event);
}

void ConvProductsCanvas::fitHeight() {
  const int wanted = heightForWidth(width());
  if (minimumHeight() != wanted) setMinimumHeight(wanted);
}

}  // namespace convscope::ui
