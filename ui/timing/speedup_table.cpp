#include "ui/timing/speedup_table.h"

#include <QHeaderView>

#include "ui/charts/benchmark_series.h"

namespace convscope::ui {
namespace {

QTableWidgetItem* cell(const QString& text, Qt::Alignment alignment = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(alignment);
  return item;
}

QString times(double factor) {
  if (factor <= 0.0) return QStringLiteral("—");
  return QStringLiteral("× %1").arg(factor, 0, 'f', factor < 10.0 ? 2 : 1);
}

}  // namespace

SpeedupTable::SpeedupTable(QWidget* parent) : QTableWidget(parent) {
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setAlternatingRowColors(true);
  verticalHeader()->setVisible(false);
  // The numbers always whole (a large font once cut every speed-up to "× …"); the variant's name
  // takes the width that is left, elided if it must be (its tooltip holds it whole).
  setColumnCount(5);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  horizontalHeader()->setStretchLastSection(false);
  setTextElideMode(Qt::ElideMiddle);
  setReport(nullptr, kAllConvLayers, 0);
}

void SpeedupTable::setReport(const BenchmarkReport* report, int layer, int batch) {
  clearContents();
  std::string baseline;
  const std::vector<Speedup> rows = report ? speedups(*report, layer, batch, &baseline) : std::vector<Speedup>{};
  baseline_ = QString::fromStdString(baseline);
  const QString baseName = baseline.empty() ? tr("the baseline") : variantDisplayName(baseline);
  setColumnCount(5);
  setHorizontalHeaderLabels(
      {tr("Course step"), tr("Variant"), tr("op time\nms"), tr("over %1").arg(baseName), tr("over the step\nbefore")});
  horizontalHeaderItem(3)->setToolTip(
      tr("Op time of %1 divided by this variant's, at batch %2").arg(baseName).arg(batch));
  horizontalHeaderItem(4)->setToolTip(tr("Op time of the row above divided by this row's"));
  setRowCount(static_cast<int>(rows.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    const Speedup& s = rows[r];
    const int row = static_cast<int>(r);
    setItem(row, 0, cell(QString::number(row + 1)));
    auto* name = cell(variantDisplayName(s.variant), Qt::AlignLeft | Qt::AlignVCenter);
    name->setToolTip(variantDisplayName(s.variant) + " (" + QString::fromStdString(s.variant) + ")");
    setItem(row, 1, name);
    setItem(row, 2, cell(QString::number(s.seconds * 1e3, 'f', s.seconds < 1e-3 ? 4 : 3)));
    setItem(row, 3, cell(times(s.overBaseline)));
    setItem(row, 4, cell(times(s.overPrevious)));
  }
}

}  // namespace convscope::ui
