// The GPU mapping tab: a conv layer of the model and two GPU variants side by side, each drawn
// by a GpuMappingView with its figures beneath; pointing at an output pixel in either shows the
// same pixel in both, so a class sees how two course steps divide the same work. Exports the
// whole comparison to PNG or PDF.
#pragma once

#include <QWidget>

#include <string>
#include <utility>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/model/model.h"

class QComboBox;
class QLabel;
class QSpinBox;

namespace convscope::ui {

class GpuMappingView;

class GpuMappingPanel : public QWidget {
  Q_OBJECT

 public:
  explicit GpuMappingPanel(QWidget* parent = nullptr);

  // The model's conv layers, at the panel's batch size. Throws convscope::Error naming the node
  // when the model's shapes are inconsistent.
  void setModel(const Model& model);
  void setLayers(std::vector<std::pair<std::string, ConvProblem>> layers);  // name, problem at batch 1
  // Selects a variant on one side (0: left, 1: right); false when the id is not a GPU variant.
  bool setVariant(int side, const std::string& variantId);
  // A student's kernel, once its row is in the variant table (it passed its check), joins both
  // sides' choices under its file's name; false when no such row is installed.
  bool addUserVariant(const std::string& variantId);
  void setLayer(int index);

  GpuMappingView* view(int side) const { return views_[side]; }
  QLabel* figures(int side) const { return figures_[side]; }
  QComboBox* layerChoice() const { return layerChoice_; }
  QComboBox* variantChoice(int side) const { return variantChoices_[side]; }
  QSpinBox* batchChoice() const { return batch_; }
  QSpinBox* mapChoice() const { return map_; }
  QString exportTo(const QString& path);

 signals:
  void errorOccurred(const QString& message);

 private:
  void showLayer();
  void showFigures(int side);  // the view's figures, its mapping words as their tooltip
  void exportAsked();

  std::vector<std::pair<std::string, ConvProblem>> layers_;
  QComboBox* layerChoice_;
  QSpinBox* batch_;
  QSpinBox* map_;
  QComboBox* variantChoices_[2];
  GpuMappingView* views_[2];
  QLabel* figures_[2];
  QWidget* sides_;
};

}  // namespace convscope::ui
