// The course's question, "how much faster did this step make it?", answered at one batch size:
// one row per variant in course order with its op time, its speed-up over the baseline and over
// the course step before it. A table rather than a chart: the numbers are what a class reads out.
#pragma once

#include <QTableWidget>

#include "app/core/engine/benchmark.h"

namespace convscope::ui {

class SpeedupTable : public QTableWidget {
  Q_OBJECT

 public:
  explicit SpeedupTable(QWidget* parent = nullptr);

  // `layer`: a conv layer's index or kAllConvLayers.
  void setReport(const BenchmarkReport* report, int layer, int batch);
  QString baseline() const { return baseline_; }  // the registry id every row is compared with

 private:
  QString baseline_;
};

}  // namespace convscope::ui
