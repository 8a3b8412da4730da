// A class graded from the window (the Class tab's "Grade a folder…"): the core's grading
// (app/core/grading/grade_class.h, as `convscope-cli grade DIR --out RESULTS` grades) on a thread
// of its own, each submission in a convscope-cli child. Progress and the grading's lines arrive as
// signals on the window's thread; cancel() stops the children at once and what is finished is
// kept and merged. The results folder fills in as each submission ends (the Class tab watches it).
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

#include "app/core/grading/grade_class.h"

namespace convscope::ui {

class ClassGradingRun : public QObject {
  Q_OBJECT

 public:
  explicit ClassGradingRun(QObject* parent = nullptr);
  ~ClassGradingRun() override;  // cancels and waits for the grading's thread

  // Grades `request` (its settings' program: the convscope-cli next to the window's program when
  // empty). False, with the reason, when a grading already runs.
  bool start(ClassGrading request, QString* whyNot = nullptr);
  void cancel();
  bool running() const { return running_; }

  // The settings the CLI's `grade` uses by default: the course model shipped with ConvScope, the
  // test set, two minutes a step, the convscope-cli beside this program.
  static GradingSettings defaultSettings();

 signals:
  // Of `submissions`, `done` kept or graded so far (kept ones count from the start).
  void progressed(int done, int submissions);
  void said(const QString& line);
  // The grading ended: `error` empty when it finished (or was stopped: `stopped`), else why not.
  void finished(const QString& error, bool stopped);

 private:
  void deliver(std::function<void()> onWindowThread);

  std::thread thread_;
  std::atomic<bool> cancelled_{false};
  bool running_ = false;
  // Shared with the grading's thread: whether this object still exists to receive its signals.
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
};

}  // namespace convscope::ui
