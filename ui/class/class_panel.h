// The Class tab: a results folder of `convscope-cli grade` (docs/class-mode.md) read as the
// leaderboard reads it (buildLeaderboard, the same ranking, one table per GPU), refreshed while
// grading runs (the folder and its submissions/ are watched; changes are gathered for a moment
// before one re-read). Per GPU: the summary line, the class's op-time distribution with the
// course's reference lines, and a sortable ranking table. Activating a row (double-click, Enter)
// asks the window to open that submission's kernel and show its op times beside the course's.
// A result file that cannot be read is named in the tab's banner and left out. "Grade a folder…"
// grades a folder of submissions from here (ClassGradingRun: the CLI's grading, a convscope-cli
// child per submission) into the folder beside it named FOLDER-results, which is opened and fills
// in as results arrive; a progress bar counts the submissions and Cancel stops the grading,
// keeping what is finished.
#pragma once

#include <QString>
#include <QWidget>

#include <filesystem>
#include <memory>
#include <optional>

#include "app/core/engine/benchmark.h"
#include "app/core/grading/class_leaderboard.h"
#include "app/core/grading/grading_settings.h"

class QFileSystemWatcher;
class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableWidget;
class QTimer;

namespace convscope::ui {

class ClassDistributionChart;
class ClassGradingRun;
class ErrorBanner;

class ClassPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ClassPanel(QWidget* parent = nullptr);

  // Reads `folder` and watches it. Empty on success, else the message (also in the tab's banner).
  QString openFolder(const QString& folder);
  void openFolderDialog();
  QString folder() const { return folder_; }
  // Reads the folder again now (what the watcher does after its pause).
  void reload();

  // Grades the submissions in `submissions` (each FILE.cu or a folder holding one) into `results`
  // (empty: the folder beside it, SUBMISSIONS-results), which is opened at once. Empty when the
  // grading started, else why not (also in the banner). gradingFinished() when it ends.
  QString gradeFolder(const QString& submissions, const QString& results = {});
  void gradeFolderDialog();
  void cancelGrading();
  bool gradingRunning() const;
  // What grading uses: ClassGradingRun::defaultSettings() unless set (tests: a shorter time limit).
  void setGradingSettings(const GradingSettings& settings) { gradingSettings_ = settings; }
  QProgressBar* gradingProgress() const { return gradingProgress_; }
  QString gradingStatus() const;  // the grading's last line, or how it ended

  // The columns of every ranking table.
  enum Column {
    Rank,
    Id,
    Status,
    Message,
    Accuracy,
    OpTime100,
    OpTime1000,
    OpTime10000,
    SpeedupOverBaseline,
    SpeedupOverCudnn,
    Registers,
    Occupancy,
    ColumnCount
  };

  int groupCount() const;
  QTabWidget* groupTabs() const { return groups_; }
  QTableWidget* table(int group) const;
  ClassDistributionChart* chart(int group) const;
  QString summaryText(int group) const;
  QString bannerText() const;  // empty while hidden
  const Leaderboard& leaderboard() const { return board_; }

  // Activates row `row` (in the table's current order) of group `group`: what a double-click does.
  void activateRow(int group, int row);

  // The leaderboard's CSV (every group), and the shown group's chart. Empty on success, else the message.
  QString exportCsv(const QString& path) const;
  QString exportChart(const QString& path, int width = 1100, int height = 500);

  // The times a submission's row holds, as a benchmark report with one run per timed batch
  // (variant: the student's id, only the conv layers' sum), and the group's reference variants
  // in the same form; null when there are none.
  static std::shared_ptr<BenchmarkReport> submissionTimes(const LeaderboardGroup& group, const nlohmann::json& row);
  static std::shared_ptr<BenchmarkReport> referenceTimes(const LeaderboardGroup& group);

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 signals:
  // A row was activated and its kernel file is there: `file`, with its op times (may have no runs)
  // and the course's reference times of its GPU (null when there are none).
  void submissionChosen(const QString& file, const QString& id, std::shared_ptr<const BenchmarkReport> times,
                        std::shared_ptr<const BenchmarkReport> reference);
  void errorOccurred(const QString& message);
  void reloaded();  // after every read of the folder (tests wait for it)
  void gradingFinished();

 private:
  void rebuildGroups();
  void fillTable(QTableWidget* table, const LeaderboardGroup& group);
  void fitColumns(QTableWidget* table);
  void watchFolder();
  void exportCsvAsked();
  void exportChartAsked();

  QString folder_;
  Leaderboard board_;
  bool published_ = false;  // board_ is a published leaderboard.json (no submissions/ beside it)
  ErrorBanner* banner_;
  QLabel* folderLabel_;
  void showFolderName();  // the folder's path in the label, shortened in its middle to fit
  QLabel* emptyNote_;
  QPushButton* exportCsv_;
  QPushButton* exportChart_;
  QTabWidget* groups_;
  QPushButton* grade_;
  QPushButton* cancelGrading_;
  QWidget* gradingRow_ = nullptr;
  QProgressBar* gradingProgress_;
  QLabel* gradingStatus_;
  ClassGradingRun* grading_;
  GradingSettings gradingSettings_;
  QFileSystemWatcher* watcher_;
  QTimer* debounce_;
};

}  // namespace convscope::ui
