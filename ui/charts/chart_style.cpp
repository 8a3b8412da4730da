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

QColor variantColour(const std::string& variantId) {
  // Sixteen colours that stay apart from each other on white and on black (Tableau 10 and six
  // more), one per row while the table has at most sixteen: a legend never shows one colour twice.
  static const QColor colours[] = {QColor(0x1f77b4), QColor(0xff7f0e), QColor(0x2ca02c), QColor(0xd62728),
                                   QColor(0x9467bd), QColor(0x8c564b), QColor(0xe377c2), QColor(0x17becf),
                                   QColor(0xbcbd22), QColor(0x7f7f7f), QColor(0x00a08a), QColor(0xf2af29),
                                   QColor(0x393b79), QColor(0xad494a), QColor(0x637939), QColor(0x6b6ecf)};
  const auto& variants = convVariants();
  for (size_t i = 0; i < variants.size(); ++i)
    if (variants[i].id == variantId) return colours[i % std::size(colours)];
  // Students' kernels take the colours after the course's rows.
  const std::vector<const ConvVariant*> users = userConvVariants();
  for (size_t i = 0; i < users.size(); ++i)
    if (users[i]->id == variantId) return colours[(variants.size() + i) % std::size(colours)];
  return QColor(0x999999);
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
