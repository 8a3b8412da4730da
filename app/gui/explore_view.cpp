#include "app/gui/explore_view.h"

#include "ui/charts/prediction_panel.h"
#include "ui/maps/feature_map_view.h"

namespace convscope::gui {

ExploreView::ExploreView(QWidget* parent)
    : QSplitter(Qt::Horizontal, parent),
      maps_(new ui::FeatureMapView(this)),
      prediction_(new ui::PredictionPanel(this)) {
  addWidget(maps_);
  addWidget(prediction_);
  setStretchFactor(0, 3);
  setStretchFactor(1, 2);
}

}  // namespace convscope::gui
