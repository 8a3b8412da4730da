// The course as a staircase: each variant's speed-up over the baseline, in course order, as
// bars on a logarithmic axis (each step up the stairs is a course step that paid), labelled
// with the speed-up over the baseline and over the step before. The numbers are the Speed-ups
// table's (speedups() in benchmark_series.h); this only draws them.
#pragma once

#include <qcustomplot.h>

#include <memory>
#include <vector>

#include "app/core/engine/benchmark.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/styled_plot.h"

namespace convscope::ui {

class SpeedupStaircase : public StyledPlot {
  Q_OBJECT

 public:
  explicit SpeedupStaircase(QWidget* parent = nullptr);

  // `layer`: a conv layer's index or kAllConvLayers; `batch`: 0 for the report's largest.
  void setReport(std::shared_ptr<const BenchmarkReport> report, const QString& machine, int layer, int batch);
  const std::vector<Speedup>& steps() const { return steps_; }
  // The bar labels, in course order (tests read what the chart says).
  QStringList labels() const { return labels_; }

  QSize minimumSizeHint() const override { return {240, 200}; }

 private:
  void rebuild();
  void restyle() override;

  std::shared_ptr<const BenchmarkReport> report_;
  QString machine_;
  int layer_ = kAllConvLayers;
  int batch_ = 0;
  std::vector<Speedup> steps_;
  QStringList labels_;
  std::string baseline_;
};

}  // namespace convscope::ui
