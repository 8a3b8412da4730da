// The model tab: where the model came from and what it is (producer, opset, input and output,
// the card's description and accuracy), and its layer table as `convscope-cli info` prints it:
// name, operator, output shape, parameters and FLOPs for one image.
#pragma once

#include <QWidget>

#include <optional>

#include "app/core/model/model.h"
#include "app/core/model/model_card.h"

class QLabel;
class QTableWidget;

namespace convscope::ui {

class ModelSummaryView : public QWidget {
  Q_OBJECT

 public:
  explicit ModelSummaryView(QWidget* parent = nullptr);

  void setModel(const Model& model, const std::optional<ModelCard>& card);
  QTableWidget* table() const { return table_; }

 private:
  QLabel* header_;
  QTableWidget* table_;
};

}  // namespace convscope::ui
