// Colour maps for feature maps: value -> colour through a 256-entry table. Viridis (perceptually
// even, readable in grayscale print), plain gray, and blue-white-red for signed values around 0.
#pragma once

#include <QImage>
#include <QString>
#include <QVector>

#include <cstddef>

namespace convscope::ui {

enum class ColourMap { Viridis, Gray, Diverging };

struct ValueRange {
  float low = 0.0f;
  float high = 1.0f;
};

QString colourMapName(ColourMap map);
const QVector<QRgb>& colourTable(ColourMap map);

// The range a layer's values are shown with: from the 1st to the 99th percentile (min and max for
// 200 values or fewer), so that a few extreme values do not wash out the rest; values beyond it
// take the end colours. With the n values sorted ascending, the 1st percentile is the value at
// index n / 100 and the 99th the one at index n - 1 - n / 100 (integer division). Symmetric around 0 for the diverging
// map, so that white means zero.
ValueRange displayRange(const float* values, std::size_t count, ColourMap map);

// A height x width plane of values as an indexed image with the map's colour table.
QImage mapImage(const float* values, int height, int width, ValueRange range, ColourMap map);

// A model's input (channels planes of height x width, as the model takes them) as a picture: one
// gray plane, or three in colour (put back to R, G, B from B, G, R where `bgr`). All planes share
// one display range (displayRange over every value, Gray), so the colours keep their balance.
QImage pictureImage(const float* values, int channels, int height, int width, bool bgr);

}  // namespace convscope::ui
