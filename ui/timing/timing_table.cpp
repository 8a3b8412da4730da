#include "ui/timing/timing_table.h"

#include <QHeaderView>

#include "ui/charts/benchmark_series.h"

namespace convscope::ui {
namespace {

QTableWidgetItem* number(double value, int decimals) {
  auto* item = new QTableWidgetItem(QString::number(value, 'f', decimals));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QString ms(double seconds) {
  return QString::number(seconds * 1e3, 'f', seconds < 1e-3 ? 4 : 3);
}

}  // namespace

TimingTable::TimingTable(QWidget* parent) : QTableWidget(parent) {
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setAlternatingRowColors(true);
  setSortingEnabled(false);
  verticalHeader()->setVisible(false);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setReport(nullptr);
}

void TimingTable::setReport(const BenchmarkReport* report, int firstCancelledRun) {
  clear();
  const std::vector<std::string> layers = report ? convLayersIn(*report) : std::vector<std::string>{};
  QStringList headers{tr("Variant"), tr("Batch")};
  for (size_t l = 0; l < layers.size(); ++l) headers << tr("conv %1\nms").arg(l + 1);
  headers << tr("all conv\nms") << tr("all conv\nGFLOP/s") << tr("inference\nms") << tr("upload\nms") << tr("accuracy");
  setColumnCount(static_cast<int>(headers.size()));
  setHorizontalHeaderLabels(headers);
  setRowCount(report ? static_cast<int>(report->runs.size()) : 0);
  if (!report) return;
  for (size_t r = 0; r < report->runs.size(); ++r) {
    const BenchmarkRun& run = report->runs[r];
    const int row = static_cast<int>(r);
    int column = 0;
    const bool fromCancelledSweep = firstCancelledRun >= 0 && row >= firstCancelledRun;
    auto* name = new QTableWidgetItem(variantDisplayName(run.variant) +
                                      (fromCancelledSweep ? tr(" (cancelled sweep)") : QString()));
    name->setToolTip(QString::fromStdString(run.variant) +
                     (fromCancelledSweep ? tr(": measured by a sweep that was cancelled after this run") : QString()));
    if (fromCancelledSweep) {
      QFont italic = font();
      italic.setItalic(true);
      name->setFont(italic);
    }
    setItem(row, column++, name);
    auto* batch = number(run.batch, 0);
    setItem(row, column++, batch);
    double sum = 0.0, flops = 0.0;
    for (size_t l = 0; l < layers.size(); ++l, ++column) {
      if (l >= run.layers.size()) continue;
      const LayerBenchmark& layer = run.layers[l];
      sum += layer.opTime.median;
      flops += static_cast<double>(layer.problem.flops());
      auto* item = new QTableWidgetItem(ms(layer.opTime.median) + (layer.fallbackReason.empty() ? "" : " *"));
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      QString tip = tr("median %1 ms, min %2, max %3 · %4 GFLOP/s, %5 GB/s")
                        .arg(ms(layer.opTime.median), ms(layer.opTime.min), ms(layer.opTime.max))
                        .arg(layer.gflops, 0, 'f', 1)
                        .arg(layer.gbytesPerSecond, 0, 'f', 1);
      if (!layer.fallbackReason.empty())
        tip += tr("\nran %1: %2")
                   .arg(QString::fromStdString(layer.ranVariant), QString::fromStdString(layer.fallbackReason));
      item->setToolTip(tip);
      setItem(row, column, item);
    }
    auto* total = new QTableWidgetItem(ms(sum));
    total->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    setItem(row, column++, total);
    setItem(row, column++, number(sum > 0.0 ? flops / sum / 1e9 : 0.0, 1));
    auto* inference = new QTableWidgetItem(ms(run.inference.median));
    inference->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    setItem(row, column++, inference);
    auto* upload = new QTableWidgetItem(ms(run.upload.median));
    upload->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    setItem(row, column++, upload);
    setItem(row, column++, number(run.accuracy, 4));
  }
}

}  // namespace convscope::ui
