// How every chart looks, taken from the application's palette and font so that presentation
// mode (large fonts, high contrast) restyles the charts with the rest of the window, and one
// colour per kernel variant, the same in every chart.
#pragma once

#include <QColor>
#include <QEvent>
#include <QPoint>
#include <QWidget>

#include <functional>
#include <string>

#include <QStringList>

class QCustomPlot;
class QCPTextElement;

namespace convscope::ui {

// Backgrounds, axes, grids, legend and fonts of `plot` from its palette and font.
void styleChart(QCustomPlot& plot);

// Sets a chart title from its parts, joined by " · " on as few lines as fit `width` pixels at the
// title's font, a part wider than that elided: at large fonts or on a small screen a long title
// (model, device) wraps instead of running off both sides of the chart.
void setFittedTitle(QCPTextElement& title, const QStringList& parts, int width);

// How one variant is drawn in every chart: a fixed colour for each registry entry (by its position
// in the registry, students' kernels after the course's rows), so a variant keeps its colour
// across charts and files, and a second cue, the line's dash and the marker's shape, so that two
// variants whose colours are close still differ from the back of a room. Ids the registry does not
// know get a gray.
struct VariantStyle {
  QColor colour;
  Qt::PenStyle line = Qt::SolidLine;
  int marker = 0;  // a QCPScatterStyle::ScatterShape (kept an int so this header needs no QCustomPlot)
};
VariantStyle variantStyle(const std::string& variantId);
QColor variantColour(const std::string& variantId);
// The palette behind variantStyle, in registry order.
int variantPaletteSize();
VariantStyle variantStyleAt(int position);

// Answers a chart's tooltip event with the text `textAt` gives for the pointer's position (none
// where it gives an empty text). True when `event` was a tooltip event and is handled.
bool answerToolTip(QWidget& chart, QEvent* event, const std::function<QString(const QPoint&)>& textAt);

// Distinct colours for conv layers in the bar chart.
QColor layerColour(int layer);

}  // namespace convscope::ui
