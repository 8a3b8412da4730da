// The roofline: every conv layer of every variant as a point (arithmetic intensity from the bytes
// the variant moves, against achieved FLOP/s, both axes logarithmic) under its device's roofs
// (memory bandwidth, then the FP32 and TF32 tensor-core peaks), with each point's × of its floor
// beside it (×N: its op time is N times the floor, the time it would take at its roof), placed
// where no two labels and no label and point overlap, or left to the point's tooltip. Several benchmark files overlay,
// one marker shape per machine, the machine named in the legend: an H100, a laptop GPU and a CPU on one chart. Clicking
// a point selects it and says what it is.
#pragma once

#include <qcustomplot.h>

#include <memory>
#include <vector>

#include "app/core/engine/benchmark.h"
#include "ui/charts/roofline_points.h"
#include "ui/charts/styled_plot.h"

namespace convscope::ui {

struct RooflineMachine {
  std::shared_ptr<const BenchmarkReport> report;
  QString label;  // the legend's name for it: the device, and the file where two share one
};

class RooflineChart : public StyledPlot {
  Q_OBJECT

 public:
  explicit RooflineChart(QWidget* parent = nullptr);

  void setMachines(std::vector<RooflineMachine> machines);
  const std::vector<RooflineMachine>& machines() const { return machines_; }
  // `layer`: a conv layer's index, or -1 for every layer; `batch`: 0 for each file's largest.
  void setLayer(int layer);
  void setBatch(int batch);

  struct Plotted {
    int machine = 0;
    RooflinePoint point;
  };
  const std::vector<Plotted>& points() const { return points_; }
  // The point drawn nearest `position` (widget pixels) within a few pixels, else -1.
  int pointAt(const QPoint& position) const;
  // Where a point is drawn, in widget pixels (tests click there).
  QPoint pointPosition(int index) const;
  void selectPoint(int index);
  int selectedPoint() const { return selected_; }
  QString pointText(int index) const;
  int roofCount() const { return roofs_; }
  // Where the "× of floor" labels are drawn (widget pixels), and how many found no free place.
  std::vector<QRectF> floorLabelBoxes() const;
  int hiddenFloorLabels() const { return hiddenFloorLabels_; }

  QSize minimumSizeHint() const override { return {240, 200}; }

 signals:
  void pointSelected(int index, const QString& text);

 protected:
  void mousePressEvent(QMouseEvent* event) override;

 private:
  QString toolTipAt(const QPoint& position) const override { return pointText(pointAt(position)); }
  // The roofs and the machines' markers take the palette's text colour: drawn again.
  void styleChanged(QEvent::Type) override { rebuild(); }
  void fitTo(const QSize& size) override;
  void rebuild();
  void restyle() override;
  void placeFloorLabels();
  int batchFor(const BenchmarkReport& report) const;

  std::vector<RooflineMachine> machines_;
  int layer_ = -1;
  int batch_ = 0;
  std::vector<Plotted> points_;
  int selected_ = -1;
  int roofs_ = 0;
  QCPItemTracer* marker_ = nullptr;
  QCPItemText* selectedLabel_ = nullptr;
  std::vector<QCPItemText*> floorLabels_;  // by point; null where a point has no floor
  int hiddenFloorLabels_ = 0;
};

}  // namespace convscope::ui
