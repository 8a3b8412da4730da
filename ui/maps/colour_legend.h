// The legend of a colour map: a bar from the lowest to the highest value shown, labelled at both
// ends (and at 0 where the range crosses it).
#pragma once

#include <QRect>

#include "ui/maps/colour_map.h"

class QPainter;

namespace convscope::ui {

// Paints into `area` (the bar takes the middle, the labels the rest of its width).
void paintColourLegend(QPainter& painter, const QRect& area, ColourMap map, ValueRange range);

// "0.532", "-1.2e-05": compact, as wide as needed and no wider.
QString formatValue(double value);

}  // namespace convscope::ui
