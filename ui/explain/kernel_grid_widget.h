// One conv layer's filters as small images: a row per filter (output channel), a column per input
// channel (a layer that reads one channel has its filters side by side instead), each tile the kernel's weights in
// blue-white-red around zero, on one scale for the whole layer so that strong and weak filters can be compared.
// Hovering a cell gives its weight.
#pragma once

#include <QWidget>

#include "app/core/util/tensor.h"

namespace convscope::ui {

class KernelGridWidget : public QWidget {
  Q_OBJECT

 public:
  explicit KernelGridWidget(QWidget* parent = nullptr);

  // `weights`: outChannels x inChannels x kernelHeight x kernelWidth.
  void setWeights(const Tensor& weights);
  int filterCount() const { return filters_; }
  int inputChannelCount() const { return inputs_; }
  float extent() const { return extent_; }  // the largest |weight|: the ends of the colour scale
  int cellSize() const;
  // The width it may take: the tiles grow to fill it, up to twice their smallest size.
  void setAvailableWidth(int pixels);
  // The centre of the cell of weight (filter, input channel, ky, kx), in widget coordinates.
  QPoint pointOf(int filter, int channel, int ky, int kx) const;
  // What hovering `point` says: the filter, channel, position and weight; empty off the tiles.
  QString describeAt(const QPoint& point) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 signals:
  void hovered(const QString& description);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  bool transposed() const { return inputs_ == 1; }  // the filters in one row
  int columns() const;
  int labelWidth() const;
  int headerHeight() const;
  QRect tileRect(int filter, int channel) const;
  bool hit(const QPoint& point, int* filter, int* channel, int* ky, int* kx) const;

  Tensor weights_;
  int filters_ = 0, inputs_ = 0, kernelHeight_ = 0, kernelWidth_ = 0;
  float extent_ = 1.0f;
  int availableWidth_ = 0;
};

}  // namespace convscope::ui
