#include "ui/maps/map_zoom_dialog.h"

#include <QLabel>
#include <QVBoxLayout>

#include "ui/maps/layer_maps_widget.h"

namespace convscope::ui {

MapZoomDialog::MapZoomDialog(QWidget* parent)
    : QDialog(parent), map_(new LayerMapsWidget(this)), readout_(new QLabel(this)) {
  setWindowTitle(tr("Feature map"));
  map_->setTileTarget(420);
  readout_->setText(tr("Point at the map to read its values"));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(map_, 1);
  layout->addWidget(readout_);
  connect(map_, &LayerMapsWidget::hovered, this, [this](const QString& text) {
    readout_->setText(text.isEmpty() ? tr("Point at the map to read its values") : text);
  });
}

void MapZoomDialog::showMap(std::shared_ptr<const InferenceOutcome> outcome, int layer, int channel, ColourMap map) {
  layer_ = layer;
  channel_ = channel;
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
