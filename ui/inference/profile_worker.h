// Profiles one inference of the first N test images with a GPU variant, on its own thread, the
// way `convscope-cli profile` does: a warm-up inference, then one traced inference.
#pragma once

#include <QObject>

#include <atomic>
#include <memory>
#include <string>

#include "app/core/data/image_set.h"
#include "app/core/engine/kernel_table.h"
#include "app/core/model/model.h"

class QThread;

namespace convscope::ui {

struct ProfileResult {
  std::string variant;
  std::string modelName;
  std::string deviceName;
  int batch = 0;
  std::vector<KernelRow> rows;
};

class ProfileWorker : public QObject {
  Q_OBJECT

 public:
  explicit ProfileWorker(QObject* parent = nullptr);
  ~ProfileWorker() override;  // cancels a profile waiting for the device; waits for one in flight (one inference)

  bool running() const { return thread_ != nullptr; }
  void start(std::shared_ptr<const Model> model, const std::string& variant, std::shared_ptr<const ImageSet> images,
             int batch);
  // A profile still waiting for its turn on the device gives up (failed() says so); one already
  // running finishes its single inference.
  void cancel();

 signals:
  void finished(std::shared_ptr<const ProfileResult> result);
  void failed(const QString& message);

 private:
  void threadDone();

  QThread* thread_ = nullptr;
  std::atomic<bool> cancelRequested_{false};
  std::shared_ptr<ProfileResult> result_;
  QString error_;
};

}  // namespace convscope::ui
