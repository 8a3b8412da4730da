#include "ui/explain/layer_count_view.h"

namespace convscope::ui {

LayerCountView::LayerCountView(QWidget* parent) : QLabel(tr("No model"), parent) {}

void LayerCountView::setModel(std::shared_ptr<const Model> model) {
  setText(model ? tr("%n layer(s)", "", static_cast<int>(model->layers().size())) : tr("No model"));
}

}  // namespace convscope::ui
