// The History pane of the Your kernel tab: every version of the open kernel that compiled
// (kernel_history.h), as the staircase chart of its op time (KernelHistoryChart) and a list
// (version, saved at, check, op time). Choosing two versions in the list shows the diff of their
// source and of their SASS, removed lines red and added green; one version alone is compared
// with the one before it; Export chart… saves the chart (PNG or PDF). The panel feeds it the steps'
// results as they arrive.
#pragma once

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>

#include "app/core/conv/kernel_history.h"
#include "app/core/engine/benchmark.h"

class QLabel;
class QPushButton;
class QTabWidget;
class QTextEdit;
class QTreeWidget;

namespace convscope::ui {

class KernelHistoryChart;

class KernelHistoryView : public QWidget {
  Q_OBJECT

 public:
  explicit KernelHistoryView(QWidget* parent = nullptr);
  ~KernelHistoryView() override;

  // The history of `file` (read from the data folder; kernelHistoryRoot() unless `root` is given).
  void setKernelFile(const QString& file, const QString& root = QString());
  const KernelHistory* history() const { return history_.get(); }

  // The results of the open kernel's steps: a compile that succeeded records a version (or finds
  // the last one, unchanged); the check and the timing then land on that version.
  void recordCompiled(const QString& source, const QString& sass, const QString& sassMissingReason);
  void recordCheck(bool passed, const QString& summary);
  void recordTiming(const BenchmarkReport& report);

  // Shows the diff of versions `older` and `newer` (by number), as choosing them in the list does.
  void showDiff(int older, int newer);

  KernelHistoryChart* chart() const { return chart_; }
  QTreeWidget* versionList() const { return list_; }
  QString sourceDiffText() const;  // the unified diffs on screen, as text
  QString sassDiffText() const;
  QString messageText() const;  // problems reading or writing the history, empty when none
  QString exportTo(const QString& path);

 private:
  void refresh();
  void showSelection();
  void showProblem(const QString& message);

  std::unique_ptr<KernelHistory> history_;
  int currentVersion_ = 0;  // the version the running steps belong to
  QLabel* message_;
  QPushButton* exportChart_;
  KernelHistoryChart* chart_;
  QTreeWidget* list_;
  QTabWidget* diffTabs_;
  QTextEdit* sourceDiff_;
  QTextEdit* sassDiff_;
  QString sourceDiffPlain_, sassDiffPlain_;
};

}  // namespace convscope::ui
