// The profile tab: the course's kernel table (share of GPU time, total, calls, average, min,
// max per kernel and memory copy) for one inference with the chosen variant. The profiler
// times GPU kernels, so with a CPU variant, or on a machine without a GPU, it says what it
// needs instead of showing an empty table.
#pragma once

#include <QWidget>

#include <memory>

#include "data/image_set.h"
#include "model/model.h"
#include "ui/inference/profile_worker.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace convscope::ui {

class ProfilePanel : public QWidget {
  Q_OBJECT

 public:
  explicit ProfilePanel(QWidget* parent = nullptr);

  void setModel(std::shared_ptr<const Model> model);
  void setImageSet(std::shared_ptr<const ImageSet> images);
  void setVariant(const QString& variantId);

  bool canProfile() const;
  bool profileRunning() const;
  // A profile waiting for the device gives up; one already running finishes (see ProfileWorker).
  void cancelProfile();
  QString message() const;
  QTableWidget* table() const { return table_; }

 public slots:
  void runProfile();

 signals:
  void errorOccurred(const QString& message);

 private:
  void refresh();
  void showResult(std::shared_ptr<const ProfileResult> result);

  std::shared_ptr<const Model> model_;
  std::shared_ptr<const ImageSet> images_;
  QString variant_;
  ProfileWorker* worker_;
  QLabel* message_;
  QSpinBox* batch_;
  QPushButton* run_;
  QTableWidget* table_;
};

}  // namespace convscope::ui
