// How one GPU variant spreads one conv layer over thread blocks, drawn from the variant table's
// launch geometry (so it needs no GPU): the output map under the grid of blocks, and beside it
// the input plane (padding shaded). Pointing at an output pixel highlights its block, its thread,
// and the input the block reads (the tile with its halo that tiled kernels stage in shared
// memory); matrix-multiply variants also show the output matrix with the block's tile. The
// figures per block (threads, shared memory, estimated occupancy, loads and FLOPs per output)
// come as text for the panel to show.
#pragma once

#include <QWidget>

#include <string>
#include <vector>

#include "app/core/conv/block_mapping.h"
#include "app/core/conv/conv_problem.h"
#include "app/core/conv/variant_table.h"

namespace convscope::ui {

class GpuMappingView : public QWidget {
  Q_OBJECT

 public:
  explicit GpuMappingView(QWidget* parent = nullptr);

  // `map`: the output map (output channel) drawn, of image 0.
  void setLayer(const ConvProblem& problem, const QString& layerName);
  void setVariant(const std::string& variantId);
  void setMap(int map);
  void setPixel(int oh, int ow);

  const std::string& variant() const { return variant_; }
  int map() const { return map_; }
  int pixelRow() const { return oh_; }
  int pixelColumn() const { return ow_; }
  // The launch drawn (the first of the variant's kernels whose block order is known), and where
  // the geometry is unavailable, why (figuresText says it too).
  bool hasLaunch() const { return launchIndex_ >= 0; }
  const KernelLaunchGeometry& launch() const { return launches_.at(static_cast<size_t>(launchIndex_)); }
  const BlockUnderPixel& selection() const { return selection_; }
  QString figuresText() const { return figures_; }
  QString mappingText() const { return mapping_; }  // the launch's mapping in the launcher's words
  // Where output pixel (oh, ow) is drawn, for pointing at it (tests click there).
  QPoint outputPixelCentre(int oh, int ow) const;

  QSize sizeHint() const override { return {520, heightForWidth(520)}; }
  // As tall as the drawing is at that width, so the figures under it follow it without a gap.
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  // The bottom of what is drawn (widget pixels): the planes, or the matrix under them.
  int drawingBottom() const;
  QSize minimumSizeHint() const override { return {240, 200}; }

 signals:
  void pixelChanged(int oh, int ow);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  struct Layout {
    QRectF input;   // the padded input plane
    QRectF output;  // the output map
    QRectF matrix;  // the output matrix (matrix-tile variants), else empty
    double inputCell = 0.0, outputCell = 0.0;
  };
  Layout layout() const;
  void rebuild();
  void updateSelection();
  bool pixelAt(const QPointF& position, int* oh, int* ow) const;

  ConvProblem problem_;
  bool hasProblem_ = false;
  QString layerName_;
  std::string variant_;
  int map_ = 0;
  int oh_ = 0, ow_ = 0;
  std::vector<KernelLaunchGeometry> launches_;
  int launchIndex_ = -1;
  const ConvVariant* row_ = nullptr;  // the variant drawn, when it has a launch
  QString unavailable_;
  std::vector<int64_t> blockOfPixel_;  // the block of every pixel of the map drawn
  BlockUnderPixel selection_;
  QString figures_;
  QString mapping_;
};

}  // namespace convscope::ui
