// Op time against batch size, log-log, one line per kernel variant with a legend: for one conv
// layer or all of them summed. It plots whatever the report holds, two variants or eleven.
#pragma once

#include <qcustomplot.h>

#include <memory>

#include "engine/benchmark.h"

namespace convscope::ui {

class TimingLineChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit TimingLineChart(QWidget* parent = nullptr);

  void setReport(std::shared_ptr<const BenchmarkReport> report);
  // A conv layer's index, or kAllConvLayers for their sum.
  void setLayer(int layer);
  int layer() const { return layer_; }
  // The variant drawn by graph(i).
  const std::vector<std::string>& variants() const { return variants_; }

  // QCustomPlot asks for room for every tick label; a splitter may squeeze the chart below that.
  QSize minimumSizeHint() const override { return {200, 160}; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuild();

  std::shared_ptr<const BenchmarkReport> report_;
  int layer_ = -1;
  std::vector<std::string> variants_;
  QCPTextElement* title_;
};

}  // namespace convscope::ui
