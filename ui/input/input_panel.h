// Where the picture comes from: the test-set browser or the drawing canvas, one tab each (image
// files arrive through the window's menu and drag-and-drop). Whichever the user works with
// becomes the current input and is announced as an InputImage.
#pragma once

#include <QWidget>

#include <memory>

#include "app/core/data/image_set.h"
#include "ui/inference/input_image.h"

class QTabWidget;

namespace convscope::ui {

class DrawingPanel;
class DatasetBrowser;

class InputPanel : public QWidget {
  Q_OBJECT

 public:
  enum class Source { TestSet, Drawing };

  explicit InputPanel(QWidget* parent = nullptr);

  void setImageSet(std::shared_ptr<const ImageSet> images);
  DatasetBrowser* browser() const { return browser_; }
  DrawingPanel* drawing() const { return drawing_; }
  Source source() const;
  void showSource(Source source);

  // The test image `index` as an input (false when there is none).
  bool testImage(int index, InputImage* input) const;

 signals:
  void inputChosen(const convscope::ui::InputImage& input);
  // The current source has no picture (an empty canvas); `message` says what to do.
  void inputCleared(const QString& message);

 private:
  void announceTestImage(int index);
  void announceDrawing();

  std::shared_ptr<const ImageSet> images_;
  QTabWidget* tabs_;
  DatasetBrowser* browser_;
  DrawingPanel* drawing_;
};

}  // namespace convscope::ui
