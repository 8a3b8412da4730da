// The Weights tab: every conv layer's filters, as KernelGridWidget draws them, top to bottom in
// execution order, with the colour scale of each layer and the weight under the pointer.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

#include "app/core/model/model.h"

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace convscope::ui {

class KernelGridWidget;

class KernelWeightsView : public QWidget {
  Q_OBJECT

 public:
  explicit KernelWeightsView(QWidget* parent = nullptr);

  void setModel(std::shared_ptr<const Model> model);
  int layerCount() const { return static_cast<int>(grids_.size()); }
  KernelGridWidget* layer(int i) const { return grids_.at(static_cast<size_t>(i)); }
  QString layerTitle(int i) const;
  QString readout() const;
  QString message() const;  // why no filters are shown, or empty
  // Every layer's filters (not only the part scrolled into view), as PNG or PDF.
  QString exportTo(const QString& path);

 signals:
  void errorOccurred(const QString& message);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  std::shared_ptr<const Model> model_;
  QLabel* readout_;
  QLabel* message_;
  QScrollArea* scroll_;
  QWidget* content_ = nullptr;
  std::vector<KernelGridWidget*> grids_;
  std::vector<QLabel*> titles_;
  void fitGrids();
};

}  // namespace convscope::ui
