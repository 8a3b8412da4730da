// The timing tab: set up and run a sweep of kernel variants and batch sizes on a worker thread
// (progress bar, cancel; the window stays responsive), then read it as op time against batch
// size (log-log, per conv layer or their sum), as bars of the variants at one batch size and as
// a table with accuracy. Benchmark JSON files of the CLI open here and sweeps save to the same
// format, so a run on a GPU machine can be read on a laptop; CSV and the charts export.
#pragma once

#include <QWidget>

#include <memory>

#include "data/image_set.h"
#include "engine/benchmark.h"

class QComboBox;
class QLabel;

namespace convscope::ui {

class BenchmarkWorker;
class SweepControls;
class TimingBarChart;
class TimingLineChart;
class TimingTable;

class TimingPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TimingPanel(QWidget* parent = nullptr);

  void setModelPath(const QString& path) { modelPath_ = path; }
  void setImageSet(std::shared_ptr<const ImageSet> images) { images_ = std::move(images); }

  void setReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin);
  std::shared_ptr<const BenchmarkReport> report() const { return report_; }

  // Each returns an empty string on success, else the message to show.
  QString loadJson(const QString& path);
  QString saveJson(const QString& path) const;
  QString exportCsv(const QString& path) const;
  QString exportLineChart(const QString& path, int width = 1100, int height = 650);
  QString exportBarChart(const QString& path, int width = 1100, int height = 650);

  // Starts a sweep with the controls' settings; false (and errorOccurred) when it cannot start.
  bool startSweep();
  void cancelSweep();
  bool sweepRunning() const;

  SweepControls* controls() const { return controls_; }
  TimingLineChart* lineChart() const { return lineChart_; }
  TimingBarChart* barChart() const { return barChart_; }
  TimingTable* table() const { return table_; }
  QComboBox* layerChoice() const { return layerChoice_; }

 signals:
  void errorOccurred(const QString& message);
  void statusMessage(const QString& message);

 private:
  void sweepFinished(std::shared_ptr<const BenchmarkReport> report, bool cancelled);
  void openAsked();
  void saveAsked();
  void csvAsked();
  void exportAsked(bool bars);
  void fillChoices();

  QString modelPath_;
  std::shared_ptr<const ImageSet> images_;
  std::shared_ptr<const BenchmarkReport> report_;
  BenchmarkWorker* worker_;
  SweepControls* controls_;
  QComboBox* layerChoice_;
  QComboBox* batchChoice_;
  QLabel* origin_;
  TimingLineChart* lineChart_;
  TimingBarChart* barChart_;
  TimingTable* table_;
};

}  // namespace convscope::ui
