// The benchmark's numbers as a table, one row per (variant, batch): the median op time of each
// conv layer and their sum, GFLOP/s, the whole inference, the upload and the accuracy beside
// them, so a fast variant that is wrong is seen at once. Fallback layers are starred.
#pragma once

#include <QTableWidget>

#include "engine/benchmark.h"

namespace convscope::ui {

class TimingTable : public QTableWidget {
  Q_OBJECT

 public:
  explicit TimingTable(QWidget* parent = nullptr);

  void setReport(const BenchmarkReport* report);
};

}  // namespace convscope::ui
