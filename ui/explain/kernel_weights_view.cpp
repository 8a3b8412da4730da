#include "ui/explain/kernel_weights_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include "app/core/engine/conv_pixel.h"
#include "app/core/model/layer_titles.h"
#include "ui/common/export.h"
#include "ui/explain/kernel_grid_widget.h"
#include "ui/maps/colour_legend.h"

namespace convscope::ui {

KernelWeightsView::KernelWeightsView(QWidget* parent)
    : QWidget(parent), readout_(new QLabel(this)), message_(new QLabel(this)), scroll_(new QScrollArea(this)) {
  auto* top = new QHBoxLayout;
  auto* intro = new QLabel(tr("What each filter looks for: its weights per input channel, red positive, blue "
                              "negative, white zero."),
                           this);
  intro->setWordWrap(true);
  top->addWidget(intro, 1);
  auto* exportButton = new QPushButton(tr("Export…"), this);
  top->addWidget(exportButton);
  readout_->setText(tr("Point at a weight to read it."));
  message_->setWordWrap(true);
  message_->setAlignment(Qt::AlignCenter);
  scroll_->setWidgetResizable(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(readout_);
  layout->addWidget(message_);
  layout->addWidget(scroll_, 1);
  connect(exportButton, &QPushButton::clicked, this, [this] {
    const QString path = askExportPath(this, "kernel-weights");
    if (!path.isEmpty())
      if (const QString error = exportTo(path); !error.isEmpty()) emit errorOccurred(error);
  });
  setModel(nullptr);
}

void KernelWeightsView::setModel(std::shared_ptr<const Model> model) {
  model_ = std::move(model);
  grids_.clear();
  titles_.clear();
  content_ = new QWidget;
  auto* layout = new QVBoxLayout(content_);
  std::vector<std::string> names;
  if (model_) {
    try {
      names = layerTitles(*model_);
    } catch (const std::exception&) {
      names.assign(model_->nodes.size(), std::string());
    }
    for (int index : convNodeIndices(*model_)) {
      const Node& node = model_->nodes[static_cast<size_t>(index)];
      const auto weights = node.inputs.size() > 1 ? model_->weights.find(node.inputs[1]) : model_->weights.end();
      if (weights == model_->weights.end() || weights->second.rank() != 4)
        continue;  // computed weights: nothing to draw
      auto* grid = new KernelGridWidget(content_);
      grid->setWeights(weights->second);
      const std::string& name = names[static_cast<size_t>(index)];
      auto* title = new QLabel(tr("<b>%1</b> — %2 filters × %3 input channel(s), %4×%5; colours from %6 to %7")
                                   .arg(QString::fromStdString(name.empty() ? node.name : name))
                                   .arg(grid->filterCount())
                                   .arg(grid->inputChannelCount())
                                   .arg(weights->second.dim(2))
                                   .arg(weights->second.dim(3))
                                   .arg(formatValue(-grid->extent()), formatValue(grid->extent())),
                               content_);
      title->setToolTip(tr("ONNX node %1").arg(QString::fromStdString(node.name)));
      title->setWordWrap(true);  // a narrow window scrolls the filters, never the title
      layout->addWidget(title);
      layout->addWidget(grid);
      connect(grid, &KernelGridWidget::hovered, readout_, &QLabel::setText);
      grids_.push_back(grid);
      titles_.push_back(title);
    }
  }
  layout->addStretch();
  scroll_->setWidget(content_);  // deletes the previous content
  fitGrids();
  if (!model_)
    message_->setText(tr("No model is loaded."));
  else if (grids_.empty())
    message_->setText(
        tr("The model %1 has no conv layer with stored weights.").arg(QString::fromStdString(model_->name)));
  else
    message_->clear();
  message_->setVisible(!message_->text().isEmpty());
}

void KernelWeightsView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitGrids();
}

void KernelWeightsView::fitGrids() {
  const int width = scroll_->viewport()->width() - 24;  // the content's margins
  for (KernelGridWidget* grid : grids_) grid->setAvailableWidth(width);
}

QString KernelWeightsView::layerTitle(int i) const {
  return titles_.at(static_cast<size_t>(i))->text();
}

QString KernelWeightsView::readout() const {
  return readout_->text();
}

QString KernelWeightsView::message() const {
  return message_->text();
}

QString KernelWeightsView::exportTo(const QString& path) {
  return exportWidget(*content_, path);
}

}  // namespace convscope::ui
