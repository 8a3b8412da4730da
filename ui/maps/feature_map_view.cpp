#include "ui/maps/feature_map_view.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStyle>

#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/export.h"
#include "ui/common/presentation_mode.h"
#include "ui/maps/map_zoom_dialog.h"

namespace convscope::ui {
namespace {

QString hint() {
  return QObject::tr("Point at a map to read its values; click it to enlarge.");
}

}  // namespace

FeatureMapView::FeatureMapView(QWidget* parent)
    : QWidget(parent),
      mapChoice_(new QComboBox(this)),
      orderChoice_(new QComboBox(this)),
      limitChoice_(new QComboBox(this)),
      layerChoice_(new QComboBox(this)),
      channelChoice_(new QSpinBox(this)),
      readout_(new QLabel(this)),
      scroll_(new QScrollArea(this)),
      content_(new QWidget),
      contentLayout_(new QVBoxLayout(content_)) {
  for (ColourMap map : {ColourMap::Viridis, ColourMap::Diverging, ColourMap::Gray})
    mapChoice_->addItem(colourMapName(map), static_cast<int>(map));
  mapChoice_->setToolTip(tr("Colour map of the layers' values (the input is always shown in gray)"));
  connect(mapChoice_, &QComboBox::currentIndexChanged, this,
          [this](int i) { setColourMap(static_cast<ColourMap>(mapChoice_->itemData(i).toInt())); });
  auto* exportButton = new QPushButton(tr("Export…"), this);
  exportButton->setToolTip(tr("Save every layer's maps as PNG or PDF"));
  connect(exportButton, &QPushButton::clicked, this, &FeatureMapView::exportAsked);
  readout_->setText(hint());
  readout_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // long readouts never widen the window
  readout_->setWordWrap(true);  // and are never cut at the window's edge (a projector's large font)
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  orderChoice_->addItem(tr("Most active first (mean)"), static_cast<int>(MapOrder::MeanFirst));
  orderChoice_->addItem(tr("Most active first (max)"), static_cast<int>(MapOrder::MaxFirst));
  orderChoice_->addItem(tr("Channel order"), static_cast<int>(MapOrder::Channel));
  orderChoice_->setToolTip(
      tr("The order of each layer's maps: the most active for this picture first (by the "
         "map's mean or its largest value), or as the layer stores them"));
  for (int limit : {16, 64, 256, 0})
    limitChoice_->addItem(limit ? tr("%1 a layer").arg(limit) : tr("every map"), limit);
  limitChoice_->setCurrentIndex(limitChoice_->findData(limit_));
  limitChoice_->setToolTip(
      tr("How many maps of each layer are drawn: a real network's layers have up to "
         "1,280, more than a screen can show"));
  connect(orderChoice_, &QComboBox::activated, this,
          [this] { setArrangement(static_cast<MapOrder>(orderChoice_->currentData().toInt()), limit_); });
  connect(limitChoice_, &QComboBox::activated, this,
          [this] { setArrangement(order_, limitChoice_->currentData().toInt()); });
  layerChoice_->setToolTip(tr("Go to a layer"));
  connect(layerChoice_, &QComboBox::activated, this, &FeatureMapView::showLayer);
  channelChoice_->setToolTip(tr("Enlarge this map of the chosen layer, drawn in the grid or not"));
  channelChoice_->setPrefix(tr("map "));
  connect(channelChoice_, &QSpinBox::editingFinished, this,
          [this] { showChannel(layerChoice_->currentIndex(), channelChoice_->value()); });

  // Two rows, each narrow enough for the maps' side of a 1024-pixel window beside the prediction:
  // how the maps are drawn, then which maps and where to go. A combo box's width follows its
  // longest entry unless told otherwise.
  for (QComboBox* box : {mapChoice_, orderChoice_, limitChoice_, layerChoice_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(7);
  }
  auto* bar = new QHBoxLayout;
  bar->addWidget(mapChoice_, 1);
  bar->addWidget(orderChoice_, 2);
  bar->addWidget(exportButton);
  auto* goTo = new QHBoxLayout;
  goTo->addWidget(limitChoice_, 1);
  goTo->addWidget(layerChoice_, 2);
  goTo->addWidget(channelChoice_);

  contentLayout_->setContentsMargins(4, 4, 4, 4);
  contentLayout_->setSpacing(8);
  empty_ = new QLabel(content_);
  empty_->setWordWrap(true);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  empty_->hide();
  contentLayout_->addWidget(empty_);
  contentLayout_->addStretch(1);
  scroll_->setWidget(content_);
  scroll_->setWidgetResizable(true);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addLayout(goTo);
  layout->addWidget(scroll_, 1);
  layout->addWidget(readout_);
}

bool FeatureMapView::isShapeOnly(LayerRole role) {
  // The same values as the layer before, in the same or another shape: nothing new to draw.
  return role == LayerRole::Flattening || role == LayerRole::PassThrough;
}

void FeatureMapView::clear(const QString& message) {
  setOutcome(nullptr);
  empty_->setText(message);
  empty_->setVisible(!message.isEmpty());
}

QString FeatureMapView::emptyMessage() const {
  return empty_->isVisibleTo(this) ? empty_->text() : QString();
}

void FeatureMapView::setOutcome(std::shared_ptr<const InferenceOutcome> outcome) {
  outcome_ = std::move(outcome);
  empty_->hide();
  std::vector<int> shown;
  std::vector<std::string> signature;
  if (outcome_)
    for (size_t i = 0; i < outcome_->layers.size(); ++i) {
      const LayerOutput& layer = outcome_->layers[i];
      if (isShapeOnly(layer.role)) continue;
      shown.push_back(static_cast<int>(i));
      signature.push_back(layer.node + shapeToString(layer.value.shape()));
    }
  if (signature != signature_) {  // another model: new widgets; another picture: the same ones
    for (LayerMapsWidget* widget : layers_) delete widget;
    layers_.clear();
    for (size_t i = 0; i < shown.size(); ++i) {
      auto* widget = new LayerMapsWidget(content_);
      widget->setTileTarget(i == 0 ? inputTileTarget() : tileTarget_);  // the input, larger
      widget->setArrangement(order_, limit_);
      connect(widget, &LayerMapsWidget::hovered, this,
              [this](const QString& text) { readout_->setText(text.isEmpty() ? hint() : text); });
      connect(widget, &LayerMapsWidget::mapClicked, this, &FeatureMapView::enlarge);
      contentLayout_->insertWidget(static_cast<int>(i), widget);
      layers_.push_back(widget);
    }
    signature_ = std::move(signature);
  }
  for (size_t i = 0; i < shown.size(); ++i) layers_[i]->setLayer(outcome_, shown[i], map_);
  if (zoom_) zoom_->follow(outcome_, map_);
  // The Layer list: every layer drawn, by its title; the Channel box: up to the chosen layer's last map.
  const int chosen = layerChoice_->currentIndex();
  layerChoice_->clear();
  for (LayerMapsWidget* widget : layers_) layerChoice_->addItem(widget->title().section(" · ", 0, 1));
  if (chosen >= 0 && chosen < layerChoice_->count()) layerChoice_->setCurrentIndex(chosen);
  channelChoice_->setRange(
      0, std::max(0, layers_.empty() ? 0 : layer(std::max(0, layerChoice_->currentIndex()))->channelCount() - 1));
}

void FeatureMapView::setArrangement(MapOrder order, int limit) {
  // Settings written by another version may hold anything: what the lists do not offer is the default.
  if (orderChoice_->findData(static_cast<int>(order)) < 0) order = MapOrder::MeanFirst;
  if (limitChoice_->findData(limit) < 0) limit = kDefaultMapLimit;
  order_ = order;
  limit_ = limit;
  orderChoice_->setCurrentIndex(orderChoice_->findData(static_cast<int>(order)));
  limitChoice_->setCurrentIndex(limitChoice_->findData(limit_));
  for (LayerMapsWidget* widget : layers_) widget->setArrangement(order_, limit_);
}

void FeatureMapView::showLayer(int index) {
  if (index < 0 || index >= layerCount()) return;
  if (layerChoice_->currentIndex() != index) layerChoice_->setCurrentIndex(index);
  channelChoice_->setRange(0, std::max(0, layer(index)->channelCount() - 1));
  content_->layout()->activate();
  scroll_->verticalScrollBar()->setValue(layer(index)->y());
}

bool FeatureMapView::showChannel(int index, int channel) {
  if (index < 0 || index >= layerCount() || channel < 0 || channel >= layer(index)->channelCount() ||
      layer(index)->isVector())
    return false;
  enlarge(layer(index)->layerIndex(), channel);
  return true;
}

qint64 FeatureMapView::imageBytes() const {
  qint64 bytes = 0;
  for (const LayerMapsWidget* widget : layers_) bytes += widget->imageBytes();
  return bytes;
}

int FeatureMapView::inputTileTarget() const {
  return tileTarget_ * 12 / 7;  // 144 px beside 84 px maps
}

int FeatureMapView::tileTargetFor(int width, bool presentation) {
  // About seven maps across at a desk and five in presentation mode, where the back row has to
  // see them; never smaller than a desk's 84 px, never larger than a map needs.
  const int columns = presentation ? 5 : 7;
  return std::clamp(width / columns - 8, presentation ? 120 : 84, presentation ? 320 : 168);
}

void FeatureMapView::fitTiles() {
  const int scrollBar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, scroll_);
  const int target = tileTargetFor(width() - scrollBar - 8, presentationMode());
  if (target == tileTarget_) return;
  tileTarget_ = target;
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->setTileTarget(i == 0 ? inputTileTarget() : tileTarget_);
}

void FeatureMapView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitTiles();
}

void FeatureMapView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) fitTiles();  // presentation mode on or off
}

void FeatureMapView::setColourMap(ColourMap map) {
  if (map == map_) return;
  map_ = map;
  mapChoice_->setCurrentIndex(mapChoice_->findData(static_cast<int>(map)));
  for (LayerMapsWidget* widget : layers_) widget->setLayer(outcome_, widget->layerIndex(), map_);
  if (zoom_) zoom_->follow(outcome_, map_);
}

QString FeatureMapView::readout() const {
  return readout_->text();
}

void FeatureMapView::enlarge(int layer, int channel) {
  if (!zoom_) {
    zoom_ = new MapZoomDialog(this);
    connect(zoom_, &MapZoomDialog::pixelClicked, this, [this](int layer, int channel, int y, int x) {
      if (!outcome_ || layer < 0 || layer >= static_cast<int>(outcome_->layers.size())) return;
      const LayerOutput& output = outcome_->layers[static_cast<size_t>(layer)];
      if (output.role == LayerRole::Convolution)
        emit convPixelChosen(QString::fromStdString(output.node), channel, y, x);
    });
  }
  zoom_->showMap(outcome_, layer, channel, map_);
}

QString FeatureMapView::exportTo(const QString& path) {
  return exportWidget(*content_, path);
}

void FeatureMapView::exportAsked() {
  const QString path = askExportPath(this, "feature-maps");
  if (path.isEmpty()) return;
  if (const QString error = exportTo(path); !error.isEmpty()) emit errorOccurred(error);
}

}  // namespace convscope::ui
