// The model tab: where the model came from and what it is (producer, opset, input and output,
// the card's description and accuracy), its layer table as `convscope-cli info` prints it (name,
// operator, output shape, parameters and FLOPs for one image), and the engine's plan for the
// selected variant: the stages in order, who runs each, fused groups and every fallback with why.
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
  // The plan of `variantId` for one image (a variant that cannot run here is planned all the same).
  void showPlan(const Model& model, const std::string& variantId);
  QTableWidget* table() const { return table_; }
  QTableWidget* planTable() const { return plan_; }
  QString planTitle() const;
  // "total: N parameters · M FLOPs per image", under the layer table.
  QLabel* totals() const { return totals_; }

 private:
  QLabel* header_;
  QTableWidget* table_;
  QLabel* totals_;
  QLabel* planTitle_;
  QTableWidget* plan_;
};

}  // namespace convscope::ui
