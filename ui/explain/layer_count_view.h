// Throwaway: how many layers the model has (checks the "Adding a tab" recipe).
#pragma once

#include <QLabel>

#include <memory>

#include "app/core/model/model.h"

namespace convscope::ui {

class LayerCountView : public QLabel {
  Q_OBJECT

 public:
  explicit LayerCountView(QWidget* parent = nullptr);
  void setModel(std::shared_ptr<const Model> model);
};

}  // namespace convscope::ui
