// Profiles one inference of the first N test images with a GPU variant as a job of the JobRunner,
// the way `convscope-cli profile` does: a warm-up inference, then one traced inference. The
// runner runs nothing else meanwhile, so the trace sees only this inference's kernels.
#pragma once

#include <QObject>
#include <QPointer>

#include <memory>
#include <string>
#include <vector>

#include "app/core/data/image_set.h"
#include "app/core/engine/kernel_table.h"
#include "app/core/model/model.h"
#include "ui/jobs/job_runner.h"

namespace convscope::ui {

struct ProfileResult {
  std::string variant;
  std::string modelName;
  std::string deviceName;
  int batch = 0;
  std::vector<KernelRow> rows;
};

class ProfileJob : public QObject {
  Q_OBJECT

 public:
  explicit ProfileJob(JobRunner* jobs, QObject* parent = nullptr);
  ~ProfileJob() override;  // cancels a profile still waiting

  bool running() const { return job_ != 0; }
  void start(std::shared_ptr<const Model> model, const std::string& variant, std::shared_ptr<const ImageSet> images,
             int batch);
  // A profile still waiting for its turn gives up (failed() says so); one already running
  // finishes its single inference.
  void cancel();

 signals:
  void finished(std::shared_ptr<const ProfileResult> result);
  void failed(const QString& message);

 private:
  QPointer<JobRunner> jobs_;
  JobRunner::JobId job_ = 0;
};

}  // namespace convscope::ui
