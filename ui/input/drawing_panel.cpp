#include "ui/input/drawing_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include "ui/input/drawing_canvas.h"
#include "ui/input/drawing_preprocessing.h"

namespace convscope::ui {

DrawingPanel::DrawingPanel(QWidget* parent)
    : QWidget(parent),
      canvas_(new DrawingCanvas(this)),
      brush_(new QSlider(Qt::Horizontal, this)),
      preview_(new QLabel(this)) {
  brush_->setRange(6, 60);
  brush_->setValue(canvas_->brushSize());
  brush_->setToolTip(tr("Brush size"));
  connect(brush_, &QSlider::valueChanged, canvas_, &DrawingCanvas::setBrushSize);

  auto* clear = new QPushButton(tr("Clear"), this);
  auto* undo = new QPushButton(tr("Undo"), this);
  clear->setToolTip(tr("Clear the canvas (Delete)"));
  undo->setToolTip(tr("Take back the last stroke (Ctrl+Z)"));
  clear->setShortcut(QKeySequence::Delete);
  undo->setShortcut(QKeySequence::Undo);
  undo->setEnabled(false);
  connect(clear, &QPushButton::clicked, canvas_, &DrawingCanvas::clear);
  connect(undo, &QPushButton::clicked, canvas_, &DrawingCanvas::undo);
  connect(canvas_, &DrawingCanvas::undoAvailable, undo, &QPushButton::setEnabled);

  preview_->setFixedSize(56, 56);
  preview_->setToolTip(tr("Your drawing as a 28 x 28 data-set picture: centred and scaled to fill the frame"));

  auto* tools = new QHBoxLayout;
  tools->addWidget(new QLabel(tr("Brush"), this));
  tools->addWidget(brush_, 1);
  tools->addWidget(undo);
  tools->addWidget(clear);

  auto* previewRow = new QHBoxLayout;
  auto* note = new QLabel(tr("Centred and scaled like the data set:"), this);
  note->setWordWrap(true);
  previewRow->addWidget(note, 1);
  previewRow->addWidget(preview_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(canvas_, 1);
  layout->addLayout(tools);
  layout->addLayout(previewRow);

  connect(canvas_, &DrawingCanvas::pictureChanged, this, [this] {
    const Picture framed = framedPicture();
    updatePreview(framed);
    emit pictureChanged(framed);
  });
  updatePreview(framedPicture());
}

Picture DrawingPanel::framedPicture() const {
  return frameDrawing(canvas_->picture());
}

int DrawingPanel::brushSize() const {
  return brush_->value();
}

void DrawingPanel::setBrushSize(int canvasPixels) {
  brush_->setValue(canvasPixels);
}

void DrawingPanel::updatePreview(const Picture& framed) {
  QImage image(framed.width, framed.height, QImage::Format_Grayscale8);
  for (int y = 0; y < framed.height; ++y)
    for (int x = 0; x < framed.width; ++x)
      image.scanLine(y)[x] = static_cast<uchar>(std::clamp(framed.at(y, x), 0.0f, 1.0f) * 255.0f + 0.5f);
  preview_->setPixmap(QPixmap::fromImage(image.scaled(preview_->size())));
}

}  // namespace convscope::ui
