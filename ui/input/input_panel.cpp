#include "ui/input/input_panel.h"

#include <QTabWidget>
#include <QVBoxLayout>

#include "ui/input/dataset_browser.h"
#include "ui/input/drawing_canvas.h"
#include "ui/input/drawing_panel.h"

namespace convscope::ui {

InputPanel::InputPanel(QWidget* parent)
    : QWidget(parent),
      tabs_(new QTabWidget(this)),
      browser_(new DatasetBrowser(this)),
      drawing_(new DrawingPanel(this)) {
  tabs_->addTab(browser_, tr("Test set"));
  tabs_->addTab(drawing_, tr("Draw"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(tabs_);

  connect(browser_, &DatasetBrowser::imageChosen, this, &InputPanel::announceTestImage);
  connect(drawing_, &DrawingPanel::pictureChanged, this, &InputPanel::announceDrawing);
  // Switching tabs switches the input to what that tab holds.
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (source() == Source::Drawing)
      announceDrawing();
    else if (browser_->currentImage() >= 0)
      announceTestImage(browser_->currentImage());
  });
}

void InputPanel::setImageSet(std::shared_ptr<const ImageSet> images) {
  images_ = images;
  browser_->setImageSet(std::move(images));
}

InputPanel::Source InputPanel::source() const {
  return tabs_->currentWidget() == drawing_ ? Source::Drawing : Source::TestSet;
}

void InputPanel::showSource(Source source) {
  tabs_->setCurrentWidget(source == Source::Drawing ? static_cast<QWidget*>(drawing_) : browser_);
}

bool InputPanel::testImage(int index, InputImage* input) const {
  if (!images_ || index < 0 || index >= images_->count()) return false;
  input->image = images_->image(index);
  input->label = images_->hasLabels() ? images_->label(index) : ImageSet::kNoLabel;
  input->testIndex = index;
  input->description = tr("Test image #%1").arg(index);
  return true;
}

void InputPanel::announceTestImage(int index) {
  InputImage input;
  if (source() == Source::TestSet && testImage(index, &input)) emit inputChosen(input);
}

void InputPanel::announceDrawing() {
  if (source() != Source::Drawing) return;
  if (drawing_->canvas()->isEmpty()) {
    emit inputCleared(tr("Draw a piece of clothing"));
    return;
  }
  InputImage input;
  input.image = drawing_->framedPicture();
  input.description = tr("Drawing");
  emit inputChosen(input);
}

}  // namespace convscope::ui
