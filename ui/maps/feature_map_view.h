// Every layer's output for the current picture, top to bottom in execution order: the input as
// the model sees it, then each conv, activation, pooling and dense layer as a grid of maps with
// its colour legend. Shape-only layers (Flatten, Reshape, Identity) are left out: their values
// are those of the layer before. Hovering reads values; clicking a map enlarges it. The maps are
// as large as the width allows (larger still in presentation mode), so a wide screen or a
// projector shows them large instead of leaving the space empty.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

#include "ui/inference/inference_outcome.h"
#include "ui/maps/colour_map.h"
#include "ui/maps/layer_maps_widget.h"

class QComboBox;
class QLabel;
class QScrollArea;
class QSpinBox;
class QVBoxLayout;

namespace convscope::ui {

class MapZoomDialog;

class FeatureMapView : public QWidget {
  Q_OBJECT

 public:
  explicit FeatureMapView(QWidget* parent = nullptr);

  void setOutcome(std::shared_ptr<const InferenceOutcome> outcome);
  // No maps, and `message` in their place (why there are none: an inference that failed ...).
  void clear(const QString& message);
  QString emptyMessage() const;  // empty while maps (or nothing) are shown
  void setColourMap(ColourMap map);
  ColourMap colourMap() const { return map_; }
  // The maps' order in every layer, and how many of each layer are drawn (0: all; default
  // kDefaultMapLimit): a real network's layer of 1,280 maps opens on its most active.
  static constexpr int kDefaultMapLimit = 64;
  void setArrangement(MapOrder order, int limit);
  MapOrder mapOrder() const { return order_; }
  int mapLimit() const { return limit_; }
  // Scrolls the grid to shown layer `index` (of layerCount()); the Layer list does it.
  void showLayer(int index);
  // Enlarges map `channel` of shown layer `index`, drawn in the grid or not (the Channel box).
  bool showChannel(int index, int channel);
  // The bytes of every map image held (the outcome's values aside): bounded by the limit.
  qint64 imageBytes() const;

  int layerCount() const { return static_cast<int>(layers_.size()); }
  LayerMapsWidget* layer(int i) const { return layers_.at(static_cast<size_t>(i)); }
  MapZoomDialog* zoomDialog() const { return zoom_; }  // null until a map was clicked
  QString readout() const;
  // The whole grid (not only the visible part) as PNG or PDF; empty on success, else the error.
  QString exportTo(const QString& path);

  static bool isShapeOnly(LayerRole role);
  // About how many pixels a map's longer side takes in a view `width` pixels wide.
  static int tileTargetFor(int width, bool presentation);
  int tileTarget() const { return tileTarget_; }

 signals:
  void errorOccurred(const QString& message);
  // A pixel of a conv layer's enlarged map was clicked: show how that layer computes it.
  void convPixelChosen(const QString& node, int channel, int y, int x);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void fitTiles();
  int inputTileTarget() const;
  void enlarge(int layer, int channel);
  void exportAsked();

  std::shared_ptr<const InferenceOutcome> outcome_;
  ColourMap map_ = ColourMap::Viridis;
  MapOrder order_ = MapOrder::MeanFirst;
  int limit_ = kDefaultMapLimit;
  int tileTarget_ = 84;
  QComboBox* mapChoice_;
  QComboBox* orderChoice_;
  QComboBox* limitChoice_;
  QComboBox* layerChoice_;
  QSpinBox* channelChoice_;
  QLabel* readout_;
  QScrollArea* scroll_;
  QWidget* content_;
  QVBoxLayout* contentLayout_;
  QLabel* empty_;
  std::vector<LayerMapsWidget*> layers_;
  std::vector<std::string> signature_;  // node and shape of each shown layer, to reuse widgets
  MapZoomDialog* zoom_ = nullptr;
};

}  // namespace convscope::ui
