// Reads the test set as a job of the JobRunner, off the GUI thread: the window opens at once and
// fills the browser when the images arrive. A test set is a folder of IDX files (Fashion-MNIST's
// 10,000 images), or photos in class subfolders (PyTorch's ImageFolder layout: folder/tabby/1.jpg),
// which are stored as the model sees them and so are read for one model and its preprocessing.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <string>
#include <vector>

#include "app/core/data/image_set.h"
#include "app/core/data/preprocessing.h"
#include "app/core/model/model.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

class TestSetLoadJob : public QObject {
  Q_OBJECT

 public:
  explicit TestSetLoadJob(JobRunner* jobs, QObject* parent = nullptr);
  ~TestSetLoadJob() override;  // drops a load still waiting

  // A later load supersedes an earlier one. `model`, `preprocessing` and `classNames` (its card's)
  // bring an ImageFolder's photos to the model's input and name its subfolders' classes; an IDX
  // folder needs none of them.
  void load(const QString& folder, std::shared_ptr<const Model> model = nullptr,
            const Preprocessing& preprocessing = {}, const std::vector<std::string>& classNames = {});
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
