#include "ui/charts/chart_style.h"

#include <qcustomplot.h>

#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>

#include "app/core/conv/variant_table.h"

namespace convscope::ui {

void styleChart(QCustomPlot& plot) {
  const QPalette palette = plot.palette();
  const QColor background = palette.color(QPalette::Base);
  const QColor text = palette.color(QPalette::Text);
  QColor grid = text;
  grid.setAlpha(45);
  QFont font = plot.font();
  QFont small = font;
  small.setPointSizeF(font.pointSizeF() * 0.9);

  plot.setBackground(background);
  for (QCPAxisRect* rect : plot.axisRects())
    for (QCPAxis* axis : rect->axes()) {
      axis->setBasePen(QPen(text, 1));
      axis->setTickPen(QPen(text, 1));
      axis->setSubTickPen(QPen(text, 1));
      axis->setTickLabelColor(text);
      axis->setLabelColor(text);
      axis->setTickLabelFont(small);
      axis->setLabelFont(font);
      axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
      axis->grid()->setSubGridPen(QPen(grid.lighter(), 1, Qt::DotLine));
      axis->grid()->setZeroLinePen(Qt::NoPen);
    }
  plot.legend->setFont(small);
  plot.legend->setTextColor(text);
  QColor legendBackground = background;
  legendBackground.setAlpha(225);
  plot.legend->setBrush(legendBackground);
  plot.legend->setBorderPen(QPen(grid, 1));
  for (int i = 0; i < plot.plotLayout()->elementCount(); ++i)
    if (auto* title = qobject_cast<QCPTextElement*>(plot.plotLayout()->elementAt(i))) {
      QFont bold = font;
      bold.setBold(true);
      title->setFont(bold);
      title->setTextColor(text);
    }
}

void setFittedTitle(QCPTextElement& title, const QStringList& parts, int width) {
  const QFontMetrics metrics(title.font());
  const int room = std::max(40, width - 16);
  QStringList lines;
  for (const QString& part : parts) {
    const QString joined = lines.isEmpty() ? part : lines.back() + QStringLiteral(" · ") + part;
    if (!lines.isEmpty() && metrics.horizontalAdvance(joined) <= room)
      lines.back() = joined;
    else
      lines << metrics.elidedText(part, Qt::ElideRight, room);
  }
  title.setText(lines.join('\n'));
}

namespace {

// Sixteen colours picked for a projector: lightness between 38 and 74 (CIELAB), so each reads on
// the white and on the black (presentation) background alike, and as far apart from each other as
// sixteen can be (the closest pairs, about 28 apart, a purple and a pink, a brown and a gray,
// always differ in their second cue). The first nine are Tableau 10's.
constexpr QRgb kVariantColours[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f,
                                    0x17becf, 0x8000ff, 0xff00d4, 0xbfae56, 0x004ce6, 0xff0080, 0x00734c, 0x994c00};
// The second cue: five marker shapes in turn, and the second eight of every sixteen dashed.
constexpr QCPScatterStyle::ScatterShape kMarkers[] = {QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare,
                                                      QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
                                                      QCPScatterStyle::ssCrossSquare};

int registryPosition(const std::string& variantId) {
  const auto& variants = convVariants();
  for (size_t i = 0; i < variants.size(); ++i)
    if (variants[i].id == variantId) return static_cast<int>(i);
  const std::vector<const ConvVariant*> users = userConvVariants();
  for (size_t i = 0; i < users.size(); ++i)
    if (users[i]->id == variantId) return static_cast<int>(variants.size() + i);
  return -1;
}

}  // namespace

int variantPaletteSize() {
  return static_cast<int>(std::size(kVariantColours));
}

VariantStyle variantStyleAt(int position) {
  const int palette = variantPaletteSize();
  VariantStyle style;
  style.colour = QColor::fromRgb(kVariantColours[position % palette]);
  style.line = (position % palette) >= palette / 2 ? Qt::DashLine : Qt::SolidLine;
  style.marker = kMarkers[position % std::size(kMarkers)];
  return style;
}

VariantStyle variantStyle(const std::string& variantId) {
  const int position = registryPosition(variantId);
  if (position < 0) return {QColor(0x999999), Qt::DotLine, QCPScatterStyle::ssCircle};
  return variantStyleAt(position);
}

QColor variantColour(const std::string& variantId) {
  return variantStyle(variantId).colour;
}

QColor layerColour(int layer) {
  static const QColor colours[] = {QColor(0x4e79a7), QColor(0xf28e2b), QColor(0x59a14f),
                                   QColor(0xe15759), QColor(0x76b7b2), QColor(0xedc948)};
  return colours[static_cast<size_t>(layer) % std::size(colours)];
}

bool answerToolTip(QWidget& chart, QEvent* event, const std::function<QString(const QPoint&)>& textAt) {
  if (event->type() != QEvent::ToolTip) return false;
  const auto* help = static_cast<QHelpEvent*>(event);
  const QString text = textAt(help->pos());
  if (text.isEmpty()) {
    QToolTip::hideText();
    event->ignore();
  } else {
    QToolTip::showText(help->globalPos(), text, &chart);
  }
  return true;
}

}  // namespace convscope::ui
