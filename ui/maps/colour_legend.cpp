#include "ui/maps/colour_legend.h"

#include <QPainter>

#include <cmath>

namespace convscope::ui {

QString formatValue(double value) {
  const double magnitude = std::abs(value);
  if (magnitude != 0.0 && (magnitude < 1e-3 || magnitude >= 1e4)) return QString::number(value, 'e', 2);
  return QString::number(value, 'g', 3);
}

void paintColourLegend(QPainter& painter, const QRect& area, ColourMap map, ValueRange range) {
  const QFontMetrics metrics = painter.fontMetrics();
  const QString low = formatValue(range.low), high = formatValue(range.high);
  const int lowWidth = metrics.horizontalAdvance(low), highWidth = metrics.horizontalAdvance(high);
  const int gap = 4;
  const QRect bar(area.left() + lowWidth + gap, area.center().y() - area.height() / 4,
                  std::max(8, area.width() - lowWidth - highWidth - 2 * gap), std::max(6, area.height() / 2));
  const QVector<QRgb>& table = colourTable(map);
  QImage strip(256, 1, QImage::Format_RGB32);
  for (int i = 0; i < 256; ++i) strip.setPixel(i, 0, table[i]);
  painter.drawImage(bar, strip);
  painter.setPen(painter.pen().color());
  painter.drawRect(bar.adjusted(0, 0, -1, -1));
  painter.drawText(QRect(area.left(), area.top(), lowWidth, area.height()), Qt::AlignVCenter | Qt::AlignLeft, low);
  painter.drawText(QRect(bar.right() + gap, area.top(), highWidth, area.height()), Qt::AlignVCenter | Qt::AlignLeft,
                   high);
  if (range.low < 0.0f && range.high > 0.0f) {  // where zero sits
    const int x = bar.left() + static_cast<int>(bar.width() * (-range.low) / (range.high - range.low));
    painter.drawLine(x, bar.top() - 2, x, bar.bottom() + 2);
  }
}

}  // namespace convscope::ui
