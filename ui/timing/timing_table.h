// The benchmark's numbers as a table, one row per (variant, batch): the median op time of each
// conv layer and their sum, GFLOP/s, the whole inference, the upload and the accuracy beside
// them, so a fast variant that is wrong is seen at once. Fallback layers are starred; runs kept
// from a cancelled sweep say so in their variant cell.
#pragma once

#include <QTableWidget>

#include "app/core/engine/benchmark.h"

namespace convscope::ui {

class TimingTable : public QTableWidget {
  Q_OBJECT

 public:
  explicit TimingTable(QWidget* parent = nullptr);

  // Runs from `firstCancelledRun` on came from a sweep that was cancelled (-1: none did).
  void setReport(const BenchmarkReport* report, int firstCancelledRun = -1);
};

}  // namespace convscope::ui
