// The profile tab: the course's kernel table (share of GPU time, total, calls, average, min,
// max per kernel and memory copy) for one inference with the chosen variant. The profiler
// times GPU kernels, so with a CPU variant, or on a machine without a GPU, it says why the table
// is empty; a profile saved on a GPU machine (`convscope-cli profile --json`) opens here anywhere.
#pragma once

#include <QTemporaryDir>
#include <QWidget>

#include <memory>

#include "app/core/data/image_set.h"
#include "app/core/model/model.h"
#include "ui/jobs/profile_job.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace convscope::ui {

class ProfilePanel : public QWidget {
  Q_OBJECT

 public:
  // Profiles run as jobs of `jobs`.
  explicit ProfilePanel(JobRunner* jobs, QWidget* parent = nullptr);

  void setModel(std::shared_ptr<const Model> model);
  void setImageSet(std::shared_ptr<const ImageSet> images);
  void setVariant(const QString& variantId);

  bool canProfile() const;
  bool profileRunning() const;
  // A profile waiting for the device gives up; one already running finishes (see ProfileJob).
  void cancelProfile();
  QString message() const;
  QTableWidget* table() const { return table_; }
  QPushButton* openButton() const { return open_; }
  // Shown where no GPU can profile: opens the kernel table measured on an H100 (built in).
  QPushButton* exampleButton() const { return example_; }
  static constexpr const char* kExampleResource = ":/examples/profile-h100-restrict-unroll-10000.json";

  // Shows a saved profile (docs/profile-json.md); empty on success, else the message (the file
  // name and the problem), and the table shown before stays.
  QString openProfile(const QString& path);

 public slots:
  void runProfile();

 signals:
  void errorOccurred(const QString& message);

 private:
  void refresh();
  void showResult(std::shared_ptr<const ProfileResult> result);
  void fillTable(const std::vector<KernelRow>& rows);
  void openAsked();

  std::shared_ptr<const Model> model_;
  std::shared_ptr<const ImageSet> images_;
  QString variant_;
  ProfileJob* profile_;
  QLabel* message_;
  QSpinBox* batch_;
  QPushButton* run_;
  QPushButton* open_;
  QPushButton* example_;
  QTemporaryDir exampleFolder_;  // the example's copy: the reader takes files, not resources
  QTableWidget* table_;
  QString shown_;  // what the table shows, when it holds one: "<b>variant</b>, model …"
  bool shownFromFile_ = false;
};

}  // namespace convscope::ui
