// The first tab: the feature maps of every layer beside the prediction, side by side in a
// splitter whose proportions the window keeps in its settings.
#pragma once

#include <QSplitter>

namespace convscope::ui {
class FeatureMapView;
class PredictionPanel;
}  // namespace convscope::ui

namespace convscope::gui {

class ExploreView : public QSplitter {
  Q_OBJECT

 public:
  explicit ExploreView(QWidget* parent = nullptr);

  ui::FeatureMapView* maps() const { return maps_; }
  ui::PredictionPanel* prediction() const { return prediction_; }

 private:
  ui::FeatureMapView* maps_;
  ui::PredictionPanel* prediction_;
};

}  // namespace convscope::gui
