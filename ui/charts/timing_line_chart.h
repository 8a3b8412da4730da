// Op time against batch size, log-log, one line per kernel variant: for one conv layer or all of
// them summed. It plots whatever the report holds, two variants or eleven. The legend lists the
// variants in course order; clicking an entry hides or shows its line; pointing at a point
// says what it is (variant, layer, batch size, op time).
#pragma once

#include <qcustomplot.h>

#include <memory>
#include <set>

#include "app/core/engine/benchmark.h"
#include "ui/charts/styled_plot.h"

namespace convscope::ui {

class TimingLineChart : public StyledPlot {
  Q_OBJECT

 public:
  explicit TimingLineChart(QWidget* parent = nullptr);

  void setReport(std::shared_ptr<const BenchmarkReport> report);
  // Another machine's (or model's) results drawn beside the report's: the same colours, hollow
  // markers and thin lines, each name followed by `label`; null for none.
  void setComparison(std::shared_ptr<const BenchmarkReport> comparison, const QString& label);
  int comparisonGraphCount() const { return comparisonGraphs_; }
  // A conv layer's index, or kAllConvLayers for their sum.
  void setLayer(int layer);
  int layer() const { return layer_; }
  // The variant drawn by graph(i).
  const std::vector<std::string>& variants() const { return variants_; }
  // Hides or shows a variant's line (what a click on its legend entry does).
  void setVariantShown(const std::string& variant, bool shown);
  // The tooltip of the point nearest `position` (widget pixels), empty when none is near.
  QString pointToolTip(const QPoint& position) const;
  bool legendIsBelow() const { return legendIsBelow_; }  // under the axes (narrow) or beside them

  // QCustomPlot asks for room for every tick label; a splitter may squeeze the chart below that.
  QSize minimumSizeHint() const override { return {200, 160}; }

 private:
  QString toolTipAt(const QPoint& position) const override { return pointToolTip(position); }
  // Presentation mode changes the font: the lines are drawn again, thicker or thinner.
  void styleChanged(QEvent::Type change) override;
  void fitTo(const QSize& size) override { placeLegend(size); }
  void rebuild();
  void restyle() override;
  void placeLegend(QSize size);

  std::shared_ptr<const BenchmarkReport> report_;
  std::shared_ptr<const BenchmarkReport> comparison_;
  QString comparisonLabel_;
  int comparisonGraphs_ = 0;
  std::vector<std::string> graphVariants_;  // the variant of every graph, the comparison's too
  int layer_ = -1;
  std::vector<std::string> variants_;
  std::set<std::string> hidden_;  // variants whose line the user switched off, kept across layers
  QCPLayoutGrid* body_ = nullptr;
  QCPLayoutGrid* legendBeside_ = nullptr;  // a column right of the axes
  QCPLayoutGrid* legendBelow_ = nullptr;   // a row under them
  bool legendIsBelow_ = false;
};

}  // namespace convscope::ui
