#include "ui/gpumap/gpu_mapping_panel.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include "app/core/conv/variant_table.h"
#include "app/core/util/error.h"
#include "ui/common/export.h"
#include "ui/gpumap/gpu_mapping_view.h"

namespace convscope::ui {

GpuMappingPanel::GpuMappingPanel(QWidget* parent)
    : QWidget(parent),
      layerChoice_(new QComboBox(this)),
      batch_(new QSpinBox(this)),
      map_(new QSpinBox(this)),
      sides_(new QWidget(this)) {
  batch_->setRange(1, 100000);
  batch_->setValue(1);
  batch_->setToolTip(tr("Images per launch: the grid grows with the batch (the view draws image 0)"));
  map_->setRange(0, 0);
  map_->setToolTip(tr("The output map (output channel) drawn"));
  auto* exportButton = new QPushButton(tr("Export…"), this);
  exportButton->setToolTip(tr("Save both variants' drawings and figures as PNG or PDF"));

  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Layer"), this));
  top->addWidget(layerChoice_, 1);
  top->addWidget(new QLabel(tr("map"), this));
  top->addWidget(map_);
  top->addWidget(new QLabel(tr("batch"), this));
  top->addWidget(batch_);
  top->addWidget(exportButton);

  auto* grid = new QGridLayout(sides_);
  grid->setContentsMargins(0, 0, 0, 0);
  std::vector<std::string> gpuVariants;
  for (const ConvVariant& v : convVariants())
    if (v.runsOnGpu()) gpuVariants.push_back(v.id);
  for (int side = 0; side < 2; ++side) {
    variantChoices_[side] = new QComboBox(sides_);
    for (const std::string& id : gpuVariants)
      variantChoices_[side]->addItem(QString::fromStdString(findConvVariant(id).displayName),
                                     QString::fromStdString(id));
    views_[side] = new GpuMappingView(sides_);
    figures_[side] = new QLabel(sides_);
    figures_[side]->setWordWrap(true);
    figures_[side]->setTextInteractionFlags(Qt::TextSelectableByMouse);
    figures_[side]->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    grid->addWidget(variantChoices_[side], 0, side);
    grid->addWidget(views_[side], 1, side);
    grid->addWidget(figures_[side], 2, side);
    connect(variantChoices_[side], &QComboBox::currentIndexChanged, this, [this, side] {
      views_[side]->setVariant(variantChoices_[side]->currentData().toString().toStdString());
      showFigures(side);
    });
    // One pixel for both sides: the comparison is of the same work.
    connect(views_[side], &GpuMappingView::pixelChanged, this, [this, side](int oh, int ow) {
      views_[1 - side]->setPixel(oh, ow);
      for (int s = 0; s < 2; ++s) showFigures(s);
    });
  }
  // The drawings take the height their width gives them and the figures sit right under them;
  // what is left stays below, not between the two.
  grid->setRowStretch(1, 0);
  grid->setRowStretch(2, 0);
  grid->setRowStretch(3, 1);
  // Default comparison: the first GPU step against the tiled one that stages its input.
  if (gpuVariants.size() > 1) {
    variantChoices_[0]->setCurrentIndex(0);
    variantChoices_[1]->setCurrentIndex(1);
  }
  for (int side = 0; side < 2; ++side)
    views_[side]->setVariant(variantChoices_[side]->currentData().toString().toStdString());

  // On a short screen in presentation mode the figures under the drawings scroll into view
  // rather than losing their last lines at the window's edge.
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(sides_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(scroll, 1);

  connect(layerChoice_, &QComboBox::currentIndexChanged, this, &GpuMappingPanel::showLayer);
  connect(batch_, &QSpinBox::valueChanged, this, &GpuMappingPanel::showLayer);
  connect(map_, &QSpinBox::valueChanged, this, [this](int map) {
    for (int side = 0; side < 2; ++side) {
      views_[side]->setMap(map);
      showFigures(side);
    }
  });
  connect(exportButton, &QPushButton::clicked, this, &GpuMappingPanel::exportAsked);
  showLayer();
}

void GpuMappingPanel::setModel(const Model& model) {
  std::vector<std::pair<std::string, ConvProblem>> layers;
  const std::map<std::string, Shape> shapes = model.inferShapes(model.inputShapesFor(1));
  for (const Node& node : model.nodes) {
    std::vector<Shape> in;
    for (const std::string& name : node.inputs) in.push_back(shapes.at(name));
    std::optional<ConvProblem> problem;
    try {
      problem = node.op->convProblem(in);
    } catch (const Error& e) {
      throw Error(model.sourcePath + ": node '" + node.name + "' (" + node.opType + "): " + e.what());
    }
    if (problem) layers.emplace_back(node.name, *problem);
  }
  setLayers(std::move(layers));
}

void GpuMappingPanel::setLayers(std::vector<std::pair<std::string, ConvProblem>> layers) {
  layers_ = std::move(layers);
  const QSignalBlocker blocker(layerChoice_);
  layerChoice_->clear();
  for (size_t i = 0; i < layers_.size(); ++i)
    layerChoice_->addItem(tr("conv %1 (%2)").arg(i + 1).arg(QString::fromStdString(layers_[i].first)));
  showLayer();
}

bool GpuMappingPanel::addUserVariant(const std::string& variantId) {
  const QString id = QString::fromStdString(variantId);
  for (const ConvVariant* v : userConvVariants()) {
    if (v->id != variantId) continue;
    for (QComboBox* choice : variantChoices_) {
      const int index = choice->findData(id);
      if (index < 0)
        choice->addItem(QString::fromStdString(v->displayName), id);
      else  // a recompile keeps the row; its name may have changed
        choice->setItemText(index, QString::fromStdString(v->displayName));
    }
    return true;
  }
  return false;
}

bool GpuMappingPanel::setVariant(int side, const std::string& variantId) {
  // The variant selector may name a student's kernel this panel has not been told of yet.
  if (variantChoices_[side]->findData(QString::fromStdString(variantId)) < 0) addUserVariant(variantId);
  const int index = variantChoices_[side]->findData(QString::fromStdString(variantId));
  if (index < 0) return false;
  variantChoices_[side]->setCurrentIndex(index);
  views_[side]->setVariant(variantId);
  showFigures(side);
  return true;
}

void GpuMappingPanel::setLayer(int index) {
  layerChoice_->setCurrentIndex(index);
}

void GpuMappingPanel::showLayer() {
  const int index = layerChoice_->currentIndex();
  if (index < 0 || static_cast<size_t>(index) >= layers_.size()) {
    for (int side = 0; side < 2; ++side) figures_[side]->setText(tr("Load a model with conv layers."));
    return;
  }
  ConvProblem problem = layers_[static_cast<size_t>(index)].second;
  problem.batch = batch_->value();
  {
    const QSignalBlocker blocker(map_);
    map_->setRange(0, problem.outChannels - 1);
  }
  const QString name = layerChoice_->currentText();
  for (int side = 0; side < 2; ++side) {
    views_[side]->setLayer(problem, name);
    views_[side]->setMap(map_->value());
    showFigures(side);
  }
}

void GpuMappingPanel::showFigures(int side) {
  figures_[side]->setText(views_[side]->figuresText());
  figures_[side]->setToolTip(views_[side]->mappingText());
}

QString GpuMappingPanel::exportTo(const QString& path) {
  return exportWidget(*sides_, path);
}

void GpuMappingPanel::exportAsked() {
  const QString path = askExportPath(this, QStringLiteral("gpu-mapping"));
  if (path.isEmpty()) return;
  if (const QString error = exportTo(path); !error.isEmpty()) emit errorOccurred(error);
}

}  // namespace convscope::ui
