// Reads the test set (Fashion-MNIST's 10,000 IDX images) as a job of the JobRunner, off the GUI
// thread: the window opens at once and fills the browser when the images arrive.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>

#include "app/core/data/image_set.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

class TestSetLoadJob : public QObject {
  Q_OBJECT

 public:
  explicit TestSetLoadJob(JobRunner* jobs, QObject* parent = nullptr);
  ~TestSetLoadJob() override;  // drops a load still waiting

  // A later load supersedes an earlier one.
  void load(const QString& folder);
  bool loading() const { return job_ != 0; }

 signals:
  void progressed(int percent, const QString& message);
  void loaded(std::shared_ptr<const convscope::ImageSet> images);
  // `message` names the file that could not be read and why.
  void failed(const QString& folder, const QString& message);

 private:
  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;
  quint64 latest_ = 0;
};

}  // namespace convscope::ui
