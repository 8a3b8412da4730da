// One layer's output as a grid of maps, one per channel, under a readable title (the ONNX node
// name in its tooltip) and a colour legend.
// Vectors (dense layers) become one map of cells. The pointer over a map reports the value, the
// channel and the position under it; a click asks for that map enlarged. It paints everything
// itself, so a layer of 24 maps is one widget and a new picture costs one repaint.
#pragma once

#include <QImage>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

#include "ui/inference/inference_outcome.h"
#include "ui/maps/colour_map.h"

namespace convscope::ui {

// The order of a layer's maps: as the layer stores them, or the most active for this picture first
// (by each map's mean or its largest value), so that a layer of 1,280 maps opens on what matters.
enum class MapOrder { Channel, MeanFirst, MaxFirst };

class LayerMapsWidget : public QWidget {
  Q_OBJECT

 public:
  explicit LayerMapsWidget(QWidget* parent = nullptr);

  // Shows layers[layer] of `outcome`; `onlyChannel` >= 0 shows that one map alone.
  void setLayer(std::shared_ptr<const InferenceOutcome> outcome, int layer, ColourMap map, int onlyChannel = -1);
  // About how many pixels the longer side of a map should take.
  void setTileTarget(int pixels);
  // The maps' order, and how many are drawn (0: all): the first `limit` in that order. Only the
  // maps drawn have images, so that a real network's thousands of maps take bounded memory.
  void setArrangement(MapOrder order, int limit);

  int layerIndex() const { return layer_; }
  int channelCount() const { return channels_; }  // maps in the layer (all of them, even with onlyChannel)
  int mapsShown() const { return static_cast<int>(shownChannels_.size()); }
  // The channels drawn, slot by slot.
  const std::vector<int>& shownChannels() const { return shownChannels_; }
  // The bytes of the map images held: what the grid costs beyond the outcome's values.
  qint64 imageBytes() const;
  int mapHeight() const { return mapHeight_; }
  int mapWidth() const { return mapWidth_; }
  bool isVector() const { return vector_; }
  QString title() const { return title_; }
  // The title as painted at `width`: one line, or two where one would cut it (a projector's large
  // font); the second is elided only where even two do not hold it.
  QStringList titleLines(int width) const;
  QString onnxName() const { return onnxName_; }  // "ONNX node /0/Conv (Conv)": the title's tooltip
  ValueRange range() const { return range_; }
  // The value, channel and position under a point, as the hover text says it; empty off the maps.
  QString describeAt(const QPoint& point) const;
  // The centre of map `channel`'s cell (y, x), in widget coordinates: for tests and tours;
  // (-1, -1) when that map is not drawn.
  QPoint pointOf(int channel, int y, int x) const;

  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void hovered(const QString& description);
  void mapClicked(int layer, int channel);
  // The same click, with the cell under it (the enlarged map offers that pixel's arithmetic).
  void pixelClicked(int layer, int channel, int y, int x);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  bool event(QEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  struct Grid {
    int columns = 1, rows = 1, tileWidth = 1, tileHeight = 1;
  };
  Grid gridFor(int width) const;
  int headerHeight(int width) const;
  int titleWidth(int width) const;
  // Narrow (1024x700 beside the prediction): the colour legend goes on a line of its own under
  // the title, which then has the whole width, instead of cutting both.
  bool legendUnderTitle(int width) const;
  QRect tileRect(int slot, const Grid& grid) const;
  // The channel and cell under `point`, false when it is not over a map.
  bool hit(const QPoint& point, int* channel, int* y, int* x) const;
  float valueAt(int channel, int y, int x, bool* exists) const;
  void render();

  std::shared_ptr<const InferenceOutcome> outcome_;
  int layer_ = -1;
  int onlyChannel_ = -1;
  ColourMap map_ = ColourMap::Viridis;
  int tileTarget_ = 84;

  // The layer's shape as shown: channels of mapHeight_ x mapWidth_ (vectors: cells in rows).
  int channels_ = 0, mapHeight_ = 0, mapWidth_ = 0;
  bool vector_ = false;
  int vectorLength_ = 0;
  int scale_ = 1;  // screen pixels per map cell
  ValueRange range_;
  QString title_;
  QString name_;  // the title's first part ("conv 1"), for the hover readout
  QString onnxName_;
  MapOrder order_ = MapOrder::Channel;
  int limit_ = 0;
  std::vector<int> shownChannels_;  // slot -> channel
  std::vector<QImage> images_;      // slot -> image
  int hoveredChannel_ = -1;
};

}  // namespace convscope::ui
