// The arithmetic of one conv output pixel, drawn: a row per input channel with the input patch
// under the kernel (padding hatched), the kernel's weights, their element-wise products and the
// channel's sum. Cells are coloured blue-white-red by sign and carry their numbers when they are
// large enough to read; hovering a cell gives its exact figures.
#pragma once

#include <QWidget>

#include <optional>

#include "app/core/engine/conv_pixel.h"

namespace convscope::ui {

class ConvProductsCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit ConvProductsCanvas(QWidget* parent = nullptr);

  void setBreakdown(const ConvPixelBreakdown& breakdown);
  void clear();
  bool hasBreakdown() const { return breakdown_.has_value(); }
  // What hovering the cell of `term` says (its channel, position, input, weight, product).
  QString describeTerm(int channel, int ky, int kx) const;
  int cellSize() const;

  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  enum Part { Input, Weight, Product };
  int cellSizeFor(int width) const;
  void fitHeight();
  int labelWidth() const;
  int rowHeight(int cell) const;
  int headerHeight() const;
  QRect gridRect(int channel, Part part, int cell) const;
  // The term under `point`, false when none.
  bool hit(const QPoint& point, int* channel, int* ky, int* kx) const;

  std::optional<ConvPixelBreakdown> breakdown_;
  double inputExtent_ = 1.0, weightExtent_ = 1.0, productExtent_ = 1.0;
};

}  // namespace convscope::ui
