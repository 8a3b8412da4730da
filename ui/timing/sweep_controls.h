// What to measure: the variants (every registry entry; those that cannot run here disabled with
// the reason), the batch sizes, repetitions and warm-ups; Run and Cancel, and the progress of a
// sweep under way.
#pragma once

#include <QWidget>

#include <string>
#include <vector>

#include "app/core/engine/benchmark.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace convscope::ui {

class SweepControls : public QWidget {
  Q_OBJECT

 public:
  explicit SweepControls(QWidget* parent = nullptr);

  // The sweep as set up (model left empty); false with `error` set when the input is not usable.
  bool options(BenchmarkOptions* options, QString* error) const;
  void setCheckedVariants(const QStringList& ids);
  QStringList checkedVariants() const;
  void setBatches(const QString& text);
  QString batchesText() const;
  void setRepeats(int repeats);  // timed repetitions per variant and batch size
  void setRunning(bool running);
  void setProgress(int percent, const QString& message);
  QString statusText() const;  // the line under the progress bar
  // How wide the variant list has to be for its longest name at the current font.
  int namesWidth() const;

 signals:
  void runClicked();
  void cancelClicked();

 private:
  QListWidget* variants_;
  QLineEdit* batches_;
  QSpinBox* repeats_;
  QSpinBox* warmups_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
};

}  // namespace convscope::ui
