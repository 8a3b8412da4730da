// One feature map enlarged, in a window of its own beside the main one (not modal), with the
// value under the pointer. It follows new pictures: while the user draws, the map updates. A
// click on a pixel of a conv layer's map asks for that pixel's arithmetic.
#pragma once

#include <QDialog>

#include <memory>

#include "ui/inference/inference_outcome.h"
#include "ui/maps/colour_map.h"

class QLabel;

namespace convscope::ui {

class LayerMapsWidget;

class MapZoomDialog : public QDialog {
  Q_OBJECT

 public:
  explicit MapZoomDialog(QWidget* parent = nullptr);

  void showMap(std::shared_ptr<const InferenceOutcome> outcome, int layer, int channel, ColourMap map);
  // The same layer and channel of a new outcome (closes itself if the layer is gone).
  void follow(std::shared_ptr<const InferenceOutcome> outcome, ColourMap map);
  LayerMapsWidget* mapWidget() const { return map_; }
  int layer() const { return layer_; }
  int channel() const { return channel_; }

 signals:
  void pixelClicked(int layer, int channel, int y, int x);

 private:
  QString hint() const;

  LayerMapsWidget* map_;
  QLabel* readout_;
  bool conv_ = false;
  int layer_ = -1;
  int channel_ = -1;
};

}  // namespace convscope::ui
