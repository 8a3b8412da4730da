// Where a student's kernel is wrong, as pictures (docs/your-kernel.md, "Where it is wrong"): for
// the failing map a check kept (ConvFailureMap), the expected map, the kernel's map and the
// verdict of every element, side by side, one element a square of several pixels. The two maps
// share one colour scale, so a difference in colour is a difference in value; the verdict picture
// leaves the elements that passed neutral, so the pattern of the wrong ones (a block of rows, a
// border column, every other output) is what stands out. Below: the counts, the rows and columns
// that hold wrong elements as ranges, the worst elements, and a line that reads out the element
// under the mouse.
#pragma once

#include <QColor>
#include <QImage>
#include <QPoint>
#include <QRect>
#include <QWidget>

#include <optional>

#include "app/core/conv/conv_failure_map.h"
#include "ui/maps/colour_map.h"

class QLabel;
class QPlainTextEdit;

namespace convscope::ui {

class FailurePicturesCanvas;

class FailurePictures : public QWidget {
  Q_OBJECT

 public:
  enum class Picture { Expected, Actual, Verdicts };

  explicit FailurePictures(QWidget* parent = nullptr);

  void setFailureMap(const ConvFailureMap& map);
  void clear();
  const std::optional<ConvFailureMap>& failureMap() const { return map_; }

  // The colour of an element of the verdict picture; Ok is neutral.
  static QColor verdictColour(ElementVerdict verdict);
  // The kernel's map at an element that holds no number (never written, NaN).
  static QColor noNumberColour();

  // The centre of element (h, w) of `picture`, in this widget's coordinates; nullopt when the
  // element is outside the map or the pictures are not laid out.
  std::optional<QPoint> elementCentre(Picture picture, int h, int w) const;
  // What the pointer at `pos` (this widget's coordinates) is over; called on every mouse move.
  void pointAt(QPoint pos);

  // What the labels show.
  QString countsText() const;   // "wrong 12 / never written 160 / NaN 1 / total 400"
  QString rangesText() const;   // "Rows 8-15 · columns all"
  QString readoutText() const;  // "h 3, w 0: expected 0.25, got 1.5 · wrong"; empty off the map
  QString worstText() const;    // one line per worst element

 protected:
  QSize minimumSizeHint() const override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  friend class FailurePicturesCanvas;
  void showReadout(int h, int w);

  std::optional<ConvFailureMap> map_;
  QImage expectedImage_, actualImage_, verdictImage_;
  ValueRange range_;
  FailurePicturesCanvas* canvas_;
  QLabel* heading_;
  QLabel* legend_;
  QLabel* counts_;
  QLabel* ranges_;
  QLabel* readout_;
  QPlainTextEdit* worst_;
};

}  // namespace convscope::ui
