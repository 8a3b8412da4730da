// The timing tab: set up and run a sweep of kernel variants and batch sizes as a job of the
// JobRunner (progress bar, cancel; the window stays responsive), then read it as op time against
// batch size (log-log, per conv layer or their sum), as bars of the variants at one batch size
// and as a table with accuracy, and as the speed-up of each course step. Benchmark JSON files of
// the CLI open here and sweeps save to the same format, so a run on a GPU machine can be read on
// a laptop; CSV and the charts export. A cancelled sweep never throws away results shown before:
// its finished runs join them, marked. The Breakdown shows where the end-to-end time goes at the
// batch chosen, with the PyTorch peer's totals beside it: its pytorch.json opens with the benchmark
// when it lies beside it (scripts/device.sh writes them together), or on its own.
#pragma once

#include <QWidget>

#include <memory>

#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/peer_timings.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QScrollArea;
class QSplitter;
class QTabWidget;

namespace convscope::ui {

class EndToEndBreakdownChart;
class JobRunner;
class SpeedupTable;
class SweepJob;
class SweepControls;
class TimingBarChart;
class TimingLineChart;
class TimingTable;

class TimingPanel : public QWidget {
  Q_OBJECT

 public:
  // Sweeps run as jobs of `jobs`.
  explicit TimingPanel(JobRunner* jobs, QWidget* parent = nullptr);

  void setModelPath(const QString& path) { modelPath_ = path; }
  void setImageSet(std::shared_ptr<const ImageSet> images) { images_ = std::move(images); }

  void setReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin);
  std::shared_ptr<const BenchmarkReport> report() const { return report_; }

  // Each returns an empty string on success, else the message to show.
  QString loadJson(const QString& path);
  QString saveJson(const QString& path);
  QString exportCsv(const QString& path) const;
  QString exportLineChart(const QString& path, int width = 1100, int height = 650);
  QString exportBarChart(const QString& path, int width = 1100, int height = 650);
  QString exportBreakdownChart(const QString& path, int width = 1100, int height = 650);
  // The PyTorch peer of the benchmark shown (scripts/pytorch_reference.py's JSON): refused when it
  // was measured on another device than the benchmark. An empty string on success, else the message.
  QString loadPeerJson(const QString& path);
  std::shared_ptr<const PeerTimings> peer() const { return peer_; }

  // Starts a sweep with the controls' settings; false (and errorOccurred) when it cannot start.
  bool startSweep();
  void cancelSweep();
  bool sweepRunning() const;

  SweepControls* controls() const { return controls_; }
  TimingLineChart* lineChart() const { return lineChart_; }
  TimingBarChart* barChart() const { return barChart_; }
  EndToEndBreakdownChart* breakdownChart() const { return breakdownChart_; }
  TimingTable* table() const { return table_; }
  SpeedupTable* speedups() const { return speedups_; }
  QComboBox* layerChoice() const { return layerChoice_; }
  QComboBox* batchChoice() const { return batchChoice_; }
  QCheckBox* logarithmicBars() const { return logBars_; }
  QTabWidget* lowerTabs() const { return lower_; }
  // What the line over the charts says the results are (file or sweep, device, runs).
  QString originText() const;

  // Nothing lost. While a sweep runs each finished run is written to `path` (see SweepJob); the
  // results of a sweep stay "unsaved" until saved as JSON or discarded, and the file stays until
  // then too, so that the next start can offer them back after a close, a crash or a kill.
  void setRecoveryFile(const QString& path);
  QString recoveryFile() const { return recoveryFile_; }
  bool hasUnsavedResults() const { return unsaved_ || comparisonUnsaved_; }
  // The report a recovery file holds, or null (none, or unreadable).
  static std::shared_ptr<const BenchmarkReport> readRecoveryFile(const QString& path);
  // Shows recovered results as unsaved.
  void showRecovered(std::shared_ptr<const BenchmarkReport> report);
  void discardUnsavedResults();  // forgets them: removes the recovery file

  // A file of another machine (or model) that a sweep did not replace: drawn beside the sweep's
  // lines in the op-time chart; null when there is none.
  std::shared_ptr<const BenchmarkReport> comparison() const { return comparison_; }
  QString comparisonName() const { return comparisonName_; }
  // With two sets of results (a file and a sweep of another machine), which one the Bars,
  // Breakdown, Speed-ups, Table and the Roofline show: the "Results" choice above the charts,
  // visible only then. showComparisonInstead swaps the two (each keeps its PyTorch peer).
  QComboBox* resultsChoice() const { return resultsChoice_; }
  void showComparisonInstead();

 signals:
  // Whatever the tab shows now (opened, swept, merged, chosen, or null), for the views that
  // draw the same results (the Roofline): one answer in every view.
  void shownResultsChanged(std::shared_ptr<const BenchmarkReport> report, const QString& name);
  void errorOccurred(const QString& message);
  void statusMessage(const QString& message);

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fitSideColumn();
  void sweepFinished(std::shared_ptr<const BenchmarkReport> report, bool cancelled);
  void openAsked();
  void openPeerAsked();
  void setPeer(std::shared_ptr<const PeerTimings> peer, const QString& name);
  void saveAsked();
  void csvAsked();
  void exportAsked(bool bars);
  void fillChoices();
  void showReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin, int firstCancelledRun);
  // The runs of a cancelled sweep joined to the results shown, when they are of the same model,
  // device and conv layers: null when they are not. `added`: how many runs joined.
  std::shared_ptr<const BenchmarkReport> mergedWithShown(const BenchmarkReport& cancelled, int* added,
                                                         bool newerWins = false) const;
  void updateOrigin();
  void updateSpeedups();
  // The results shown move beside, in the op-time chart, with their peer and unsaved state.
  void moveShownBeside();
  void clearComparison();
  void fillResultsChoice();

  QString modelPath_;
  std::shared_ptr<const ImageSet> images_;
  std::shared_ptr<const BenchmarkReport> report_;
  SweepJob* sweep_;
  QScrollArea* sideScroll_ = nullptr;
  SweepControls* controls_;
  QComboBox* layerChoice_;
  QComboBox* batchChoice_;
  QCheckBox* logBars_;
  QLabel* origin_;
  QString originName_;  // where the results shown came from: a file name, "Sweep"
  std::shared_ptr<const PeerTimings> peer_;
  QString peerName_;
  std::shared_ptr<const BenchmarkReport> comparison_;
  QString comparisonName_;
  std::shared_ptr<const PeerTimings> comparisonPeer_;
  QString comparisonPeerName_;
  bool comparisonUnsaved_ = false;
  QComboBox* resultsChoice_ = nullptr;
  QLabel* resultsLabel_ = nullptr;
  QString recoveryFile_;
  bool unsaved_ = false;
  TimingLineChart* lineChart_;
  TimingBarChart* barChart_;
  EndToEndBreakdownChart* breakdownChart_;
  TimingTable* table_;
  SpeedupTable* speedups_;
  QTabWidget* lower_;
};

}  // namespace convscope::ui
