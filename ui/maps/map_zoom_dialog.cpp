#include "ui/maps/map_zoom_dialog.h"

#include <QLabel>
#include <QVBoxLayout>

#include "ui/maps/layer_maps_widget.h"

namespace convscope::ui {

MapZoomDialog::MapZoomDialog(QWidget* parent)
    : QDialog(parent), map_(new LayerMapsWidget(this)), readout_(new QLabel(this)) {
  setWindowTitle(tr("Feature map"));
  map_->setTileTarget(420);
  readout_->setText(hint());
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(map_, 1);
  layout->addWidget(readout_);
  connect(map_, &LayerMapsWidget::hovered, this,
          [this](const QString& text) { readout_->setText(text.isEmpty() ? hint() : text); });
  connect(map_, &LayerMapsWidget::pixelClicked, this, &MapZoomDialog::pixelClicked);
}

QString MapZoomDialog::hint() const {
  return conv_ ? tr("Point at the map to read its values; click a pixel to see its arithmetic")
               : tr("Point at the map to read its values");
}

void MapZoomDialog::showMap(std::shared_ptr<const InferenceOutcome> outcome, int layer, int channel, ColourMap map) {
  layer_ = layer;
  channel_ = channel;
  conv_ = outcome && layer >= 0 && layer < static_cast<int>(outcome->layers.size()) &&
          outcome->layers[static_cast<size_t>(layer)].role == LayerRole::Convolution;
  readout_->setText(hint());
  map_->setLayer(std::move(outcome), layer, map, channel);
  resize(sizeHint().expandedTo(QSize(460, 480)));
  show();
  raise();
}

void MapZoomDialog::follow(std::shared_ptr<const InferenceOutcome> outcome, ColourMap map) {
  if (!isVisible()) return;
  if (!outcome || layer_ >= static_cast<int>(outcome->layers.size())) {
    hide();
    return;
  }
  map_->setLayer(std::move(outcome), layer_, map, channel_);
  if (channel_ >= map_->channelCount()) hide();
}

}  // namespace convscope::ui
