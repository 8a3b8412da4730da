// The roofline tab: benchmark JSON files of one or several machines (an H100, a laptop GPU, a
// CPU) on one roofline, the machine named in the legend, and (a second sub-tab) the speed-up
// staircase of the course for one of them. Files open here (several at once) or come from the Timing tab; each chart
// exports to PNG or PDF.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

#include "app/core/engine/benchmark.h"
#include "ui/charts/roofline_chart.h"

class QComboBox;
class QLabel;
class QTabWidget;

namespace convscope::ui {

class SpeedupStaircase;

class RooflinePanel : public QWidget {
  Q_OBJECT

 public:
  explicit RooflinePanel(QWidget* parent = nullptr);

  // Adds a machine; a report of the same origin replaces the earlier one. Empty on success,
  // else the message to show (the file and what is wrong with it).
  QString addJson(const QString& path);
  void addReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin);
  // What the Timing tab shows (and the other machine's results beside it, or null): they replace
  // whatever the Timing tab gave before, and stay beside the files opened here.
  void setTimingResults(std::shared_ptr<const BenchmarkReport> shown, const QString& shownName,
                        std::shared_ptr<const BenchmarkReport> beside, const QString& besideName);
  void clear();

  RooflineChart* chart() const { return chart_; }
  SpeedupStaircase* staircase() const { return staircase_; }
  QComboBox* layerChoice() const { return layerChoice_; }
  QComboBox* machineChoice() const { return machineChoice_; }
  QLabel* selectionText() const { return selection_; }
  void showStaircase(bool on);  // the staircase sub-tab, else the roofline
  QTabWidget* views() const { return views_; }
  QString exportRoofline(const QString& path, int width = 1100, int height = 700);
  QString exportStaircase(const QString& path, int width = 1100, int height = 650);

 signals:
  void errorOccurred(const QString& message);

 private:
  void openAsked();
  void exportAsked(bool staircase);
  void refresh();
  void updateStaircase();

  struct Source {
    std::shared_ptr<const BenchmarkReport> report;
    QString origin;
    bool fromTimingTab = false;
  };
  std::vector<Source> sources_;
  RooflineChart* chart_;
  SpeedupStaircase* staircase_;
  QComboBox* layerChoice_;
  QComboBox* machineChoice_;
  QLabel* machines_;
  QLabel* selection_;
  QTabWidget* views_;
};

}  // namespace convscope::ui
