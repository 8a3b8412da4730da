// Where the end-to-end time goes at one batch size: a stacked bar per variant (the upload of the
// bytes, their resize, each plan stage, the download, the host's share, then the gaps: host
// overhead and launch latency), in course order, from the benchmark JSON; the PyTorch peer's
// totals beside them when its file is open (it gives no breakdown); and a line at the end-to-end
// floor, labelled with its value and explained by its tooltip. Each stage has a colour that no
// stage next to it in any bar has. Older files without stage timings show their conv op times
// and the rest as "other" (end_to_end_breakdown.h), and the note under the title says so; CPU variants far slower
// than every GPU bar are named in the note with their totals rather than flattening the bars.
// Pointing at a segment says what it is.
#pragma once

#include <qcustomplot.h>

#include <memory>

#include "app/core/engine/benchmark.h"
#include "app/core/engine/peer_timings.h"
#include "ui/charts/styled_plot.h"

namespace convscope::ui {

class EndToEndBreakdownChart : public StyledPlot {
  Q_OBJECT

 public:
  explicit EndToEndBreakdownChart(QWidget* parent = nullptr);

  void setReport(std::shared_ptr<const BenchmarkReport> report);
  // The PyTorch peer of the same device call (peer_timings.h), or null.
  void setPeer(std::shared_ptr<const PeerTimings> peer);
  void setBatch(int batch);
  int batch() const { return batch_; }

  // A CPU variant whose end-to-end time is more than this many times the longest GPU one is named
  // in the note instead of drawn (a linear axis would shrink every GPU bar to a sliver).
  static constexpr double kLeftOutAbove = 10.0;

  // The rows top to bottom: variants (their ids), then the peer's modes (their labels). Row r is
  // at key r + 1 on the left axis.
  const std::vector<std::string>& rows() const { return rows_; }
  // The bars of one stage across the rows (null when no row has it); "gaps" and "other" too.
  QCPBars* stageBars(const QString& name) const;
  QCPBars* peerBars() const { return peerBars_; }
  // The floor in ms at this batch (0 when unknown), its line (null then) and what its tooltip says.
  double floorMilliseconds() const { return floorMs_; }
  QCPItemStraightLine* floorLine() const { return floorLine_; }
  QString floorToolTip() const { return floorToolTip_; }
  QString noteText() const;
  // The tooltip of the segment, peer bar or floor line under `position` (widget pixels), or empty.
  QString toolTipAt(const QPoint& position) const override;

  QSize minimumSizeHint() const override { return {200, 160}; }

 private:
  void rebuild();
  void restyle() override;
  void fitTo(const QSize& size) override;
  void fitLegend(int width);

  std::shared_ptr<const BenchmarkReport> report_;
  std::shared_ptr<const PeerTimings> peer_;
  int batch_ = 0;
  std::vector<std::string> rows_;
  std::vector<double> rowTotalsMs_;  // each row's end-to-end time
  std::vector<QCPBars*> stages_;
  QCPBars* peerBars_ = nullptr;
  double floorMs_ = 0.0;
  QString floorToolTip_;
  QCPItemStraightLine* floorLine_ = nullptr;
  QCPItemText* floorLabel_ = nullptr;
  QStringList noteParts_;
  QCPTextElement* note_;
};

}  // namespace convscope::ui
