#include "ui/maps/colour_map.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <vector>

namespace convscope::ui {
namespace {

QRgb lerp(QRgb a, QRgb b, double t) {
  const auto mix = [t](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * t)); };
  return qRgb(mix(qRed(a), qRed(b)), mix(qGreen(a), qGreen(b)), mix(qBlue(a), qBlue(b)));
}

// Evenly spaced stops, linearly interpolated to 256 entries.
QVector<QRgb> fromStops(const std::vector<QRgb>& stops) {
  QVector<QRgb> table(256);
  const int segments = static_cast<int>(stops.size()) - 1;
  for (int i = 0; i < 256; ++i) {
    const double position = i / 255.0 * segments;
    const int s = std::min(segments - 1, static_cast<int>(position));
    table[i] = lerp(stops[static_cast<size_t>(s)], stops[static_cast<size_t>(s) + 1], position - s);
  }
  return table;
}

}  // namespace

QString colourMapName(ColourMap map) {
  switch (map) {
    case ColourMap::Viridis:
      return QObject::tr("Viridis");
    case ColourMap::Gray:
      return QObject::tr("Gray");
    case ColourMap::Diverging:
      return QObject::tr("Blue–white–red (signed)");
  }
  return {};
}

const QVector<QRgb>& colourTable(ColourMap map) {
  // Viridis sampled at ten even steps (the published matplotlib values).
  static const QVector<QRgb> viridis =
      fromStops({0x440154, 0x482878, 0x3e4a89, 0x31688e, 0x26828e, 0x1f9e89, 0x35b779, 0x6dcd59, 0xb4de2c, 0xfde725});
  static const QVector<QRgb> gray = fromStops({0x000000, 0xffffff});
  static const QVector<QRgb> diverging = fromStops({0x2166ac, 0x67a9cf, 0xf7f7f7, 0xef8a62, 0xb2182b});
  switch (map) {
    case ColourMap::Viridis:
      return viridis;
    case ColourMap::Gray:
      return gray;
    case ColourMap::Diverging:
      return diverging;
  }
  return viridis;
}

ValueRange displayRange(const float* values, std::size_t count, ColourMap map) {
  if (count == 0) return {};
  ValueRange range;
  if (count <= 200) {
    const auto [low, high] = std::minmax_element(values, values + count);
    range = {*low, *high};
  } else {  // the 1st to 99th percentile: a few extreme values must not wash out all the others
    std::vector<float> sorted(values, values + count);
    const size_t low = count / 100, high = count - 1 - count / 100;
    const auto at = [&sorted](size_t i) { return sorted.begin() + static_cast<std::ptrdiff_t>(i); };
    std::nth_element(sorted.begin(), at(low), sorted.end());
    // Everything from low + 1 on is >= sorted[low]; the second selection must not include low
    // itself, or it is free to move another value into that place.
    std::nth_element(at(low + 1), at(high), sorted.end());
    range = {sorted[low], sorted[high]};
  }
  if (map == ColourMap::Diverging) {
    const float extent = std::max(std::abs(range.low), std::abs(range.high));
    range = {-extent, extent};
  }
  if (!(range.high > range.low)) range.high = range.low + 1e-6f;  // a constant map: one colour, no division by 0
  return range;
}

QImage mapImage(const float* values, int height, int width, ValueRange range, ColourMap map) {
  QImage image(width, height, QImage::Format_Indexed8);
  image.setColorTable(colourTable(map));
  const float scale = 255.0f / (range.high - range.low);
  for (int y = 0; y < height; ++y) {
    uchar* row = image.scanLine(y);
    for (int x = 0; x < width; ++x) {
      const float v = values[static_cast<size_t>(y) * width + x];
      row[x] = static_cast<uchar>(std::clamp((v - range.low) * scale, 0.0f, 255.0f) + 0.5f);
    }
  }
  return image;
}

QImage pictureImage(const float* values, int channels, int height, int width, bool bgr) {
  const size_t plane = static_cast<size_t>(height) * width;
  const ValueRange range = displayRange(values, plane * static_cast<size_t>(channels), ColourMap::Gray);
  if (channels != 3)
    return mapImage(values, height, width, range, ColourMap::Gray).convertToFormat(QImage::Format_RGB32);
  QImage picture(width, height, QImage::Format_RGB32);
  const float span = range.high - range.low;
  const auto level = [&](int channel, size_t i) {
    return std::clamp(static_cast<int>(std::lround(255.0f * (values[plane * channel + i] - range.low) / span)), 0, 255);
  };
  const int red = bgr ? 2 : 0, blue = 2 - red;
  for (int y = 0; y < height; ++y) {
    auto* row = reinterpret_cast<QRgb*>(picture.scanLine(y));
    for (int x = 0; x < width; ++x) {
      const size_t i = static_cast<size_t>(y) * width + x;
      row[x] = qRgb(level(red, i), level(1, i), level(blue, i));
    }
  }
  return picture;
}

}  // namespace convscope::ui
