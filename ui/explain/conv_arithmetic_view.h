// The Arithmetic tab: how a conv layer computes one pixel of its output. The student picks a conv
// layer and a filter, clicks a pixel of that filter's output map (or steps across it with the
// arrow keys, or lets it run), and reads for every input channel the input patch, the kernel's
// weights, their products and sums, then the total plus the bias, next to the value the layer
// really produced. The arithmetic is redone here in double from the layer's captured input and
// the model's weights (conv_pixel.h), so the two numbers agreeing is a check, not a copy.
#pragma once

#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "app/core/engine/conv_pixel.h"
#include "app/core/model/model.h"
#include "ui/inference/inference_outcome.h"

class QComboBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QTimer;

namespace convscope::ui {

class ConvProductsCanvas;
class PixelPickerMap;

class ConvArithmeticView : public QWidget {
  Q_OBJECT

 public:
  explicit ConvArithmeticView(QWidget* parent = nullptr);

  void setModel(std::shared_ptr<const Model> model);
  // The picture's outcome: its captured layers are what the arithmetic reads and checks.
  void setOutcome(std::shared_ptr<const InferenceOutcome> outcome);

  int convLayerCount() const { return static_cast<int>(convNodes_.size()); }
  void selectConvLayer(int convLayer);  // 0: the first Conv of the model
  int convLayer() const;
  void selectFilter(int outChannel);
  void selectPixel(int y, int x);
  // Conv node `node`'s filter `channel` at (y, x): what a click on an enlarged map asks for. False
  // when the model has no such conv node.
  bool showPixel(const QString& node, int channel, int y, int x);
  // The breakdown shown; nullopt while there is none (no model, no picture, or a problem: message()).
  const std::optional<ConvPixelBreakdown>& breakdown() const { return breakdown_; }
  // The value the layer produced at the pixel, as the Feature maps & prediction tab's map shows it.
  std::optional<float> layerValue() const { return layerValue_; }
  QString equationText() const;
  QString message() const;  // why nothing is shown, or empty

  PixelPickerMap* picker() const { return picker_; }
  ConvProductsCanvas* canvas() const { return canvas_; }
  QPushButton* animateButton() const { return animate_; }
  QComboBox* layerChoice() const { return layers_; }
  QSpinBox* filterChoice() const { return filter_; }
  // Steps the window one pixel on, in reading order, wrapping at the end (what the animation does).
  void stepForward();
  // The equation and the whole breakdown (not only the part scrolled into view), as PNG or PDF.
  QString exportTo(const QString& path);

 signals:
  void errorOccurred(const QString& message);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void keepControlWidths();
  void fillLayers();
  void refresh();
  void showMessage(const QString& text);
  const Node* currentNode() const;

  std::shared_ptr<const Model> model_;
  std::shared_ptr<const InferenceOutcome> outcome_;
  std::vector<int> convNodes_;
  std::optional<ConvPixelBreakdown> breakdown_;
  std::optional<float> layerValue_;

  QComboBox* layers_;
  QSpinBox* filter_;
  QPushButton* animate_;
  QPushButton* export_;
  QLabel* position_;
  PixelPickerMap* picker_;
  QLabel* equation_;
  QLabel* message_;
  QScrollArea* scroll_;
  QWidget* content_;
  ConvProductsCanvas* canvas_;
  QTimer* timer_;
};

}  // namespace convscope::ui
