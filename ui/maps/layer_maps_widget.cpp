#include "ui/maps/layer_maps_widget.h"

#include <QEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "ui/maps/colour_legend.h"

namespace convscope::ui {
namespace {

constexpr int kGap = 6;
constexpr int kLegendWidth = 190;

}  // namespace

LayerMapsWidget::LayerMapsWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

void LayerMapsWidget::setTileTarget(int pixels) {
  tileTarget_ = std::max(8, pixels);
  render();
}

void LayerMapsWidget::setArrangement(MapOrder order, int limit) {
  if (order == order_ && limit == limit_) return;
  order_ = order;
  limit_ = std::max(0, limit);
  render();
}

qint64 LayerMapsWidget::imageBytes() const {
  qint64 bytes = 0;
  for (const QImage& image : images_) bytes += image.sizeInBytes();
  return bytes;
}

void LayerMapsWidget::setLayer(std::shared_ptr<const InferenceOutcome> outcome, int layer, ColourMap map,
                               int onlyChannel) {
  outcome_ = std::move(outcome);
  layer_ = layer;
  map_ = map;
  onlyChannel_ = onlyChannel;
  render();
}

void LayerMapsWidget::render() {
  images_.clear();
  shownChannels_.clear();
  channels_ = mapHeight_ = mapWidth_ = vectorLength_ = 0;
  vector_ = false;
  if (!outcome_ || layer_ < 0 || layer_ >= static_cast<int>(outcome_->layers.size())) {
    updateGeometry();
    update();
    return;
  }
  const LayerOutput& output = outcome_->layers[static_cast<size_t>(layer_)];
  const Shape& shape = output.value.shape();
  const float* data = output.value.data();
  // The first image of the batch: N x C x H x W, N x C x L, or anything else as one vector.
  if (shape.size() == 4) {
    channels_ = static_cast<int>(shape[1]);
    mapHeight_ = static_cast<int>(shape[2]);
    mapWidth_ = static_cast<int>(shape[3]);
  } else if (shape.size() == 3) {
    channels_ = static_cast<int>(shape[1]);
    mapHeight_ = 1;
    mapWidth_ = static_cast<int>(shape[2]);
  } else {
    vector_ = true;
    channels_ = 1;
    vectorLength_ = static_cast<int>(shape.size() >= 2 ? output.value.size() / std::max<int64_t>(1, shape[0])
                                                       : output.value.size());
    mapWidth_ = vectorLength_ <= 32 ? vectorLength_ : vectorLength_ <= 256 ? 32 : 64;
    mapWidth_ = std::max(1, mapWidth_);
    mapHeight_ = (vectorLength_ + mapWidth_ - 1) / mapWidth_;
  }
  const size_t plane = static_cast<size_t>(mapHeight_) * mapWidth_;
  const size_t perImage = vector_ ? static_cast<size_t>(vectorLength_) : plane * channels_;
  const ColourMap shownMap = output.node == "input" ? ColourMap::Gray : map_;  // the picture as a picture
  // An enlarged map gets the contrast of its own values; a grid shares one range so maps compare.
  const bool single = onlyChannel_ >= 0 && onlyChannel_ < channels_ && !vector_;
  range_ = single ? displayRange(data + plane * onlyChannel_, plane, shownMap) : displayRange(data, perImage, shownMap);
  // Which maps are drawn, in which order: one alone, or the layer's in the arrangement's order.
  if (single || vector_ || (output.node == "input" && channels_ == 3)) {
    shownChannels_ = {single ? onlyChannel_ : 0};
  } else {
    shownChannels_.resize(static_cast<size_t>(channels_));
    for (int c = 0; c < channels_; ++c) shownChannels_[static_cast<size_t>(c)] = c;
    if (order_ != MapOrder::Channel) {
      std::vector<double> activity(static_cast<size_t>(channels_));
      for (int c = 0; c < channels_; ++c) {
        const float* values = data + plane * c;
        double mean = 0.0;
        float largest = values[0];
        for (size_t i = 0; i < plane; ++i) {
          mean += values[i];
          largest = std::max(largest, values[i]);
        }
        activity[static_cast<size_t>(c)] = order_ == MapOrder::MeanFirst ? mean / static_cast<double>(plane) : largest;
      }
      std::stable_sort(shownChannels_.begin(), shownChannels_.end(), [&](int a, int b) {
        return activity[static_cast<size_t>(a)] > activity[static_cast<size_t>(b)];
      });
    }
    if (limit_ > 0 && channels_ > limit_) shownChannels_.resize(static_cast<size_t>(limit_));
  }
  if (vector_) {
    std::vector<float> cells(plane, range_.low);
    std::copy_n(data, vectorLength_, cells.begin());
    images_.push_back(mapImage(cells.data(), mapHeight_, mapWidth_, range_, shownMap));
    scale_ = std::clamp(tileTarget_ * 4 / mapWidth_, 6, 28);
  } else if (output.node == "input" && channels_ == 3) {
    // A colour picture as one picture in colour, R, G, B whatever the model's channel order.
    const QImage picture = pictureImage(data, 3, mapHeight_, mapWidth_, outcome_->inputIsBgr);
    images_.push_back(picture);
    channels_ = 1;  // one tile
    scale_ = std::clamp(tileTarget_ / std::max(mapHeight_, mapWidth_), 1, 32);
  } else {
    for (int c : shownChannels_) images_.push_back(mapImage(data + plane * c, mapHeight_, mapWidth_, range_, shownMap));
    scale_ = std::clamp(tileTarget_ / std::max(mapHeight_, mapWidth_), 1, 32);
    if (mapHeight_ == 1) scale_ = std::clamp(tileTarget_ * 2 / mapWidth_, 2, 32);
  }

  // The core's readable title ("conv 1 · 12 filters 7×7 → 12×42×42"); the ONNX name goes to the tooltip.
  const size_t index = static_cast<size_t>(layer_);
  const QString readable =
      index < outcome_->layerTitles.size() ? QString::fromStdString(outcome_->layerTitles[index]) : QString();
  onnxName_ =
      output.node == "input"
          ? QString()
          : tr("ONNX node %1 (%2)").arg(QString::fromStdString(output.node), QString::fromStdString(output.opType));
  if (output.node == "input") {
    name_ = tr("Input");
    title_ = tr("Input  as the model sees it · %1×%2").arg(mapHeight_).arg(mapWidth_);
  } else if (!readable.isEmpty()) {
    name_ = readable.section(" · ", 0, 0).section(" → ", 0, 0);
    title_ = readable;
  } else {
    name_ = QString::fromStdString(output.opType + " " + output.node);
    title_ = name_;
  }
  if (single)
    title_ += tr(" · channel %1 of %2").arg(onlyChannel_).arg(channels_);
  else if (mapsShown() < channels_)
    title_ += order_ == MapOrder::Channel ? tr(" · maps 0 to %1 of %2").arg(mapsShown() - 1).arg(channels_)
                                          : tr(" · the %1 most active of %2 maps").arg(mapsShown()).arg(channels_);
  if (hoveredChannel_ >= channels_) hoveredChannel_ = -1;
  updateGeometry();
  update();
}

bool LayerMapsWidget::legendUnderTitle(int width) const {
  return width - kLegendWidth - 3 * kGap < 240;
}

int LayerMapsWidget::titleWidth(int width) const {
  return std::max(1, legendUnderTitle(width) ? width - 2 * kGap : width - kLegendWidth - 3 * kGap);
}

QStringList LayerMapsWidget::titleLines(int width) const {
  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics metrics(bold);
  const int room = titleWidth(width);
  if (metrics.horizontalAdvance(title_) <= room) return {title_};
  // Break at the last space that leaves a first line that fits.
  int breakAt = -1;
  for (int i = title_.indexOf(' '); i > 0; i = title_.indexOf(' ', i + 1)) {
    if (metrics.horizontalAdvance(title_.left(i).trimmed()) > room) break;
    breakAt = i;
  }
  if (breakAt < 0) return {metrics.elidedText(title_, Qt::ElideRight, room)};
  return {title_.left(breakAt).trimmed(), metrics.elidedText(title_.mid(breakAt).trimmed(), Qt::ElideRight, room)};
}

int LayerMapsWidget::headerHeight(int width) const {
  QFont bold = font();
  bold.setBold(true);
  const int lineHeight = QFontMetrics(bold).height();
  return static_cast<int>(titleLines(width).size()) * lineHeight + 10 + (legendUnderTitle(width) ? lineHeight + 8 : 0);
}

LayerMapsWidget::Grid LayerMapsWidget::gridFor(int width) const {
  Grid grid;
  grid.tileWidth = mapWidth_ * scale_;
  grid.tileHeight = mapHeight_ * scale_;
  const int shown = mapsShown();
  grid.columns = std::clamp((width - kGap) / std::max(1, grid.tileWidth + kGap), 1, std::max(1, shown));
  grid.rows = (shown + grid.columns - 1) / grid.columns;
  return grid;
}

int LayerMapsWidget::heightForWidth(int width) const {
  if (images_.empty()) return headerHeight(width);
  const Grid grid = gridFor(width);
  return headerHeight(width) + grid.rows * (grid.tileHeight + kGap) + kGap;
}

QSize LayerMapsWidget::sizeHint() const {
  const int width = std::max(kLegendWidth * 2, std::min(6, mapsShown()) * (mapWidth_ * scale_ + kGap) + kGap);
  return {width, heightForWidth(width)};
}

QSize LayerMapsWidget::minimumSizeHint() const {
  return {mapWidth_ * scale_ + 2 * kGap, headerHeight(mapWidth_ * scale_ + 2 * kGap)};
}

QRect LayerMapsWidget::tileRect(int slot, const Grid& grid) const {
  const int row = slot / grid.columns, column = slot % grid.columns;
  return QRect(kGap + column * (grid.tileWidth + kGap), headerHeight(width()) + row * (grid.tileHeight + kGap),
               grid.tileWidth, grid.tileHeight);
}

void LayerMapsWidget::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QColor text = palette().color(QPalette::WindowText);
  painter.setPen(text);
  QFont bold = font();
  bold.setBold(true);
  painter.setFont(bold);
  const int lineHeight = painter.fontMetrics().height();
  const QStringList lines = titleLines(width());
  for (int i = 0; i < lines.size(); ++i)
    painter.drawText(QRect(kGap, 5 + i * lineHeight, titleWidth(width()), lineHeight), Qt::AlignVCenter | Qt::AlignLeft,
                     lines[i]);
  painter.setFont(font());
  if (images_.empty()) return;
  const LayerOutput& output = outcome_->layers[static_cast<size_t>(layer_)];
  const QRect legend = legendUnderTitle(width())
                           ? QRect(kGap, 5 + static_cast<int>(lines.size()) * lineHeight + 2,
                                   std::min(kLegendWidth, width() - 2 * kGap), lineHeight + 6)
                           : QRect(width() - kLegendWidth - kGap, 2, kLegendWidth, lineHeight + 6);
  paintColourLegend(painter, legend, output.node == "input" ? ColourMap::Gray : map_, range_);

  const Grid grid = gridFor(width());
  for (int slot = 0; slot < mapsShown() && slot < static_cast<int>(images_.size()); ++slot) {
    const int channel = shownChannels_[static_cast<size_t>(slot)];
    const QRect tile = tileRect(slot, grid);
    painter.drawImage(tile, images_[static_cast<size_t>(slot)]);  // nearest neighbour: cells stay crisp
    if (vector_) {                                                // cells past the end of the vector are not values
      const int used = vectorLength_;
      for (int i = used; i < mapHeight_ * mapWidth_; ++i)
        painter.fillRect(
            QRect(tile.left() + (i % mapWidth_) * scale_, tile.top() + (i / mapWidth_) * scale_, scale_, scale_),
            palette().color(QPalette::Window));
    }
    painter.setPen(channel == hoveredChannel_ ? QPen(palette().color(QPalette::Highlight), 2)
                                              : QPen(palette().color(QPalette::Mid), 1));
    painter.drawRect(tile.adjusted(-1, -1, 0, 0));
  }
}

bool LayerMapsWidget::hit(const QPoint& point, int* channel, int* y, int* x) const {
  if (images_.empty()) return false;
  const Grid grid = gridFor(width());
  for (int slot = 0; slot < mapsShown(); ++slot) {
    const QRect tile = tileRect(slot, grid);
    if (!tile.contains(point)) continue;
    *channel = shownChannels_[static_cast<size_t>(slot)];
    *x = std::clamp((point.x() - tile.left()) / scale_, 0, mapWidth_ - 1);
    *y = std::clamp((point.y() - tile.top()) / scale_, 0, mapHeight_ - 1);
    return true;
  }
  return false;
}

QPoint LayerMapsWidget::pointOf(int channel, int y, int x) const {
  const auto shown = std::find(shownChannels_.begin(), shownChannels_.end(), channel);
  if (shown == shownChannels_.end()) return {-1, -1};
  const int slot = static_cast<int>(shown - shownChannels_.begin());
  const QRect tile = tileRect(slot, gridFor(width()));
  return {tile.left() + x * scale_ + scale_ / 2, tile.top() + y * scale_ + scale_ / 2};
}

float LayerMapsWidget::valueAt(int channel, int y, int x, bool* exists) const {
  const Tensor& value = outcome_->layers[static_cast<size_t>(layer_)].value;
  const int64_t index = vector_ ? static_cast<int64_t>(y) * mapWidth_ + x
                                : (static_cast<int64_t>(channel) * mapHeight_ + y) * mapWidth_ + x;
  *exists = vector_ ? index < vectorLength_ : index < value.size();
  return *exists ? value[index] : 0.0f;
}

QString LayerMapsWidget::describeAt(const QPoint& point) const {
  int channel = 0, y = 0, x = 0;
  if (!hit(point, &channel, &y, &x)) return {};
  bool exists = false;
  const float value = valueAt(channel, y, x, &exists);
  if (!exists) return {};
  const QString& layer = name_;
  if (vector_)
    return tr("%1 · unit %2 of %3 · value %4")
        .arg(layer)
        .arg(y * mapWidth_ + x)
        .arg(vectorLength_)
        .arg(formatValue(value));
  return tr("%1 · channel %2 of %3 · x %4, y %5 · value %6")
      .arg(layer)
      .arg(channel)
      .arg(channels_)
      .arg(x)
      .arg(y)
      .arg(formatValue(value));
}

void LayerMapsWidget::mouseMoveEvent(QMouseEvent* event) {
  int channel = -1, y = 0, x = 0;
  if (!hit(event->position().toPoint(), &channel, &y, &x)) channel = -1;
  if (channel != hoveredChannel_) {
    hoveredChannel_ = channel;
    update();
  }
  emit hovered(describeAt(event->position().toPoint()));
}

void LayerMapsWidget::mousePressEvent(QMouseEvent* event) {
  int channel = 0, y = 0, x = 0;
  if (event->button() == Qt::LeftButton && hit(event->position().toPoint(), &channel, &y, &x)) {
    emit mapClicked(layer_, channel);
    emit pixelClicked(layer_, channel, y, x);
  }
}

void LayerMapsWidget::leaveEvent(QEvent*) {
  hoveredChannel_ = -1;
  update();
  emit hovered({});
}

bool LayerMapsWidget::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {  // the ONNX name, over the title only: the maps have the readout
    const auto* help = static_cast<QHelpEvent*>(event);
    if (help->pos().y() < headerHeight(width()) && !onnxName_.isEmpty())
      QToolTip::showText(help->globalPos(), onnxName_, this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

void LayerMapsWidget::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) updateGeometry();
  QWidget::changeEvent(event);
}

}  // namespace convscope::ui
