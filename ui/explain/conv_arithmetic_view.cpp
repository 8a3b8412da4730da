#include "ui/explain/conv_arithmetic_view.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "app/core/conv/variant_table.h"
#include "app/core/model/layer_titles.h"
#include "ui/common/export.h"
#include "ui/explain/conv_products_canvas.h"
#include "ui/explain/pixel_picker_map.h"
#include "ui/maps/colour_map.h"

namespace convscope::ui {
namespace {

const LayerOutput* capturedOutput(const InferenceOutcome& outcome, const std::string& node) {
  for (const LayerOutput& layer : outcome.layers)
    if (layer.node == node) return &layer;
  return nullptr;
}

QString exact(double value) {
  return QString::number(value, 'g', 8);
}

}  // namespace

ConvArithmeticView::ConvArithmeticView(QWidget* parent)
    : QWidget(parent),
      layers_(new QComboBox(this)),
      filter_(new QSpinBox(this)),
      animate_(new QPushButton(tr("Animate"), this)),
      export_(new QPushButton(tr("Export…"), this)),
      position_(new QLabel(this)),
      picker_(new PixelPickerMap(this)),
      equation_(new QLabel(this)),
      message_(new QLabel(this)),
      scroll_(new QScrollArea(this)),
      content_(new QWidget),
      canvas_(new ConvProductsCanvas(content_)),
      timer_(new QTimer(this)) {
  layers_->setToolTip(tr("The conv layer whose arithmetic is shown"));
  // Its long titles must not set the window's minimum width (a small screen in presentation mode).
  layers_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  layers_->setMinimumContentsLength(14);
  filter_->setPrefix(tr("filter "));
  filter_->setToolTip(tr("The output channel: which of the layer's filters"));
  animate_->setCheckable(true);
  animate_->setToolTip(tr("Slide the window across the map, one pixel at a time"));
  equation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  equation_->setWordWrap(true);
  message_->setWordWrap(true);
  message_->setAlignment(Qt::AlignCenter);

  auto* controls = new QHBoxLayout;
  controls->addWidget(layers_, 1);
  controls->addWidget(filter_);
  controls->addWidget(position_);
  controls->addStretch();
  controls->addWidget(animate_);
  controls->addWidget(export_);

  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  auto* mapTitle = new QLabel(tr("The filter's output map: click a pixel, or step with the arrow keys"), left);
  mapTitle->setWordWrap(true);
  leftLayout->addWidget(mapTitle);
  leftLayout->addWidget(picker_, 1);

  auto* contentLayout = new QVBoxLayout(content_);
  contentLayout->setContentsMargins(4, 4, 4, 4);
  contentLayout->addWidget(equation_);
  contentLayout->addWidget(canvas_);
  contentLayout->addStretch();
  scroll_->setWidget(content_);
  scroll_->setWidgetResizable(true);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(scroll_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 3);
  split->setSizes({250, 750});

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(message_);
  layout->addWidget(split, 1);

  connect(layers_, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
  connect(filter_, &QSpinBox::valueChanged, this, [this] { refresh(); });
  connect(picker_, &PixelPickerMap::pixelPicked, this, [this] { refresh(); });
  // The button says what a click will do; it and the pixel label keep one width, so the controls
  // around them never move while the window slides or the label's numbers change.
  keepControlWidths();
  connect(animate_, &QPushButton::toggled, this, [this](bool on) {
    animate_->setText(on ? tr("Stop") : tr("Animate"));
    if (on) {
      timer_->start(150);
      picker_->setFocus();
    } else {
      timer_->stop();
    }
  });
  connect(timer_, &QTimer::timeout, this, &ConvArithmeticView::stepForward);
  connect(export_, &QPushButton::clicked, this, [this] {
    const QString path = askExportPath(this, "conv-arithmetic");
    if (!path.isEmpty())
      if (const QString error = exportTo(path); !error.isEmpty()) emit errorOccurred(error);
  });
  showMessage(tr("Load a model and choose a picture: its conv layers' arithmetic appears here."));
}

void ConvArithmeticView::keepControlWidths() {
  const QString current = animate_->text();
  int widest = 0;
  for (const QString& text : {tr("Animate"), tr("Stop")}) {
    animate_->setText(text);
    widest = std::max(widest, animate_->sizeHint().width());
  }
  animate_->setText(current);
  animate_->setMinimumWidth(widest);
  position_->setMinimumWidth(
      position_->fontMetrics().horizontalAdvance(tr("pixel x %1, y %2 of %3×%4").arg(888).arg(888).arg(888).arg(888)));
}

void ConvArithmeticView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) keepControlWidths();  // presentation mode's larger font
}

void ConvArithmeticView::setModel(std::shared_ptr<const Model> model) {
  model_ = std::move(model);
  fillLayers();
  refresh();
}

void ConvArithmeticView::setOutcome(std::shared_ptr<const InferenceOutcome> outcome) {
  outcome_ = std::move(outcome);
  refresh();
}

void ConvArithmeticView::fillLayers() {
  const QSignalBlocker block(layers_);
  layers_->clear();
  convNodes_.clear();
  if (!model_) return;
  convNodes_ = convNodeIndices(*model_);
  std::vector<std::string> titles;
  try {
    titles = layerTitles(*model_);
  } catch (const std::exception&) {
    titles.assign(model_->nodes.size(), std::string());  // the node names below still tell them apart
  }
  for (int index : convNodes_) {
    const std::string& title = titles[static_cast<size_t>(index)];
    layers_->addItem(QString::fromStdString(title.empty() ? model_->nodes[static_cast<size_t>(index)].name : title));
    layers_->setItemData(layers_->count() - 1,
                         tr("ONNX node %1").arg(QString::fromStdString(model_->nodes[static_cast<size_t>(index)].name)),
                         Qt::ToolTipRole);
  }
}

const Node* ConvArithmeticView::currentNode() const {
  const int i = layers_->currentIndex();
  if (!model_ || i < 0 || i >= convLayerCount()) return nullptr;
  return &model_->nodes[static_cast<size_t>(convNodes_[static_cast<size_t>(i)])];
}

int ConvArithmeticView::convLayer() const {
  return layers_->currentIndex();
}

void ConvArithmeticView::selectConvLayer(int convLayer) {
  layers_->setCurrentIndex(convLayer);
}

void ConvArithmeticView::selectFilter(int outChannel) {
  filter_->setValue(outChannel);
}

void ConvArithmeticView::selectPixel(int y, int x) {
  picker_->pick(y, x);
}

bool ConvArithmeticView::showPixel(const QString& node, int channel, int y, int x) {
  if (!model_) return false;
  for (int i = 0; i < convLayerCount(); ++i)
    if (model_->nodes[static_cast<size_t>(convNodes_[static_cast<size_t>(i)])].name == node.toStdString()) {
      selectConvLayer(i);
      selectFilter(channel);
      selectPixel(y, x);
      return true;
    }
  return false;
}

void ConvArithmeticView::stepForward() {
  if (picker_->mapWidth() == 0) return;
  int x = picker_->pickedX() + 1, y = picker_->pickedY();
  if (x >= picker_->mapWidth()) {
    x = 0;
    y = (y + 1) % picker_->mapHeight();
  }
  picker_->pick(y, x);
}

void ConvArithmeticView::showMessage(const QString& text) {
  breakdown_.reset();
  layerValue_.reset();
  message_->setText(text);
  message_->setVisible(!text.isEmpty());
  equation_->clear();
  position_->clear();
  canvas_->clear();
  picker_->clearMap();
}

QString ConvArithmeticView::message() const {
  return message_->isVisible() ? message_->text() : QString();
}

void ConvArithmeticView::refresh() {
  const Node* node = currentNode();
  if (!model_) return showMessage(tr("No model is loaded."));
  if (!node) return showMessage(tr("The model %1 has no conv layer.").arg(QString::fromStdString(model_->name)));
  if (!outcome_ || outcome_->modelName != model_->name)
    return showMessage(tr("Choose a picture (the Feature maps & prediction tab): the arithmetic reads its layers."));
  const LayerOutput* output = capturedOutput(*outcome_, node->name);
  const Tensor* input = capturedInputOf(*model_, *node, outcome_->layers);
  if (!output || !input || output->value.rank() != 4)
    return showMessage(tr("The picture's layers do not include %1's input and output; choose the picture again.")
                           .arg(QString::fromStdString(node->name)));
  const Shape& shape = output->value.shape();
  const int channels = static_cast<int>(shape[1]), height = static_cast<int>(shape[2]),
            width = static_cast<int>(shape[3]);
  {
    const QSignalBlocker block(filter_);
    filter_->setRange(0, channels - 1);
  }
  const int channel = filter_->value();
  const float* plane = output->value.data() + int64_t{channel} * height * width;
  const ValueRange range = displayRange(plane, static_cast<size_t>(height) * width, ColourMap::Viridis);
  {
    const QSignalBlocker block(picker_);
    picker_->setMap(mapImage(plane, height, width, range, ColourMap::Viridis));
  }
  const int y = picker_->pickedY(), x = picker_->pickedX();
  try {
    breakdown_ = explainConvPixel(*model_, *node, *input, channel, y, x);
  } catch (const std::exception& e) {
    // Said here, in the tab, not in the window's banner: a model whose weights are computed at
    // run time is no error of the picture's, and its other tabs work.
    showMessage(QString::fromStdString(e.what()));
    return;
  }
  layerValue_ = plane[int64_t{y} * width + x];
  message_->clear();
  message_->setVisible(false);
  canvas_->setBreakdown(*breakdown_);
  position_->setText(tr("pixel x %1, y %2 of %3×%4").arg(x).arg(y).arg(width).arg(height));
  equation_->setText(equationText());
}

QString ConvArithmeticView::equationText() const {
  if (!breakdown_ || !layerValue_) return {};
  const ConvPixelBreakdown& b = *breakdown_;
  const ConvProblem& p = b.problem;
  QString text = tr("<b>Filter %1 at x %2, y %3</b>: %4 input channel(s) × %5×%6 kernel = %7 products")
                     .arg(b.outChannel)
                     .arg(b.x)
                     .arg(b.y)
                     .arg(p.inChannels)
                     .arg(p.kernelHeight)
                     .arg(p.kernelWidth)
                     .arg(b.products.size());
  if (p.hasStride()) text += tr(", stride %1×%2").arg(p.strideHeight).arg(p.strideWidth);
  int padded = 0;
  for (bool pad : b.padding) padded += pad ? 1 : 0;
  if (padded) text += tr(", %1 of them over the padding (input 0)").arg(padded);
  text += "<br>";
  text += tr("Σ products = %1").arg(exact(b.productSum));
  if (b.hasBias) text += tr(" &nbsp;+ bias %1").arg(exact(b.bias));
  text += tr(" &nbsp;= <b>%1</b>").arg(exact(b.result()));
  text += tr("<br>The layer's output at this pixel (its map in the Feature maps & prediction tab): <b>%1</b> "
             "(difference %2)")
              .arg(exact(*layerValue_))
              .arg(QString::number(std::abs(b.result() - *layerValue_), 'g', 2));
  // The sum above is exact (double); a variant that multiplies in reduced precision lands near it,
  // not on it, and the student should know that the difference is the variant's, not a mistake.
  if (outcome_)
    for (const ConvLayerTime& layer : outcome_->convTimes)
      if (layer.node == b.node && !layer.variant.empty()) {
        try {
          const ConvVariant& variant = findConvVariant(layer.variant);
          if (variant.arithmetic != "FP32")
            text += tr("<br><i>%1 computed this layer with %2 products: expect a difference of about %3 of the "
                       "values' size.</i>")
                        .arg(QString::fromStdString(variant.displayName), QString::fromStdString(variant.arithmetic))
                        .arg(variant.relativeTolerance, 0, 'g', 1);
        } catch (const std::exception&) {  // a row unknown here: nothing to add
        }
      }
  return text;
}

QString ConvArithmeticView::exportTo(const QString& path) {
  return exportWidget(*content_, path);
}

}  // namespace convscope::ui
