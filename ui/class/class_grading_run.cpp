#include "ui/class/class_grading_run.h"

#include <QMetaObject>
#include <QPointer>

#include "app/core/data/image_set.h"
#include "app/core/util/data_dir.h"
#include "app/core/util/error.h"
#include "ui/jobs/kernel_pipeline_job.h"

namespace convscope::ui {

ClassGradingRun::ClassGradingRun(QObject* parent) : QObject(parent) {}

ClassGradingRun::~ClassGradingRun() {
  *alive_ = false;
  cancel();
  if (thread_.joinable()) thread_.join();
}

GradingSettings ClassGradingRun::defaultSettings() {
  GradingSettings settings;
  settings.model = std::string(shippedModelsDir()) + "/course-high.onnx";
  settings.data = defaultDataFolder();
  settings.program = KernelPipelineJob::defaultProgram().toStdString();
  return settings;
}

void ClassGradingRun::deliver(std::function<void()> onWindowThread) {
  // Queued to this object's thread; dropped once it is gone (the destructor joins the thread,
  // but a call already queued must not reach a destroyed object).
  QMetaObject::invokeMethod(
      this,
      [alive = alive_, onWindowThread = std::move(onWindowThread)] {
        if (*alive) onWindowThread();
      },
      Qt::QueuedConnection);
}

bool ClassGradingRun::start(ClassGrading request, QString* whyNot) {
  if (running_) {
    if (whyNot) *whyNot = tr("a grading is already running: cancel it first");
    return false;
  }
  if (thread_.joinable()) thread_.join();  // the last one has ended (finished was delivered)
  if (request.settings.program.empty()) request.settings.program = defaultSettings().program;
  cancelled_ = false;
  running_ = true;
  thread_ = std::thread([this, request = std::move(request)] {
    GradingLog log;
    log.out = [this](const std::string& line) {
      deliver([this, text = QString::fromStdString(line)] { emit said(text); });
    };
    log.err = log.out;
    QString error;
    bool stopped = false;
    try {
      std::filesystem::create_directories(request.results / "submissions");
      const SubmissionFolder found = discoverSubmissions(request.dir);
      writeSkipped(request.results, found, log);
      const ClassGradingOutcome outcome = gradeClassHere(
          request, found, log, [this] { return !cancelled_.load(); },
          [this](const ClassGradingOutcome& sofar) {
            const int done = sofar.kept + sofar.graded + sofar.notGraded;
            deliver([this, done, total = sofar.submissions] { emit progressed(done, total); });
          });
      stopped = outcome.stopped;
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    deliver([this, error, stopped] {
      running_ = false;
      emit finished(error, stopped);
    });
  });
  return true;
}

void ClassGradingRun::cancel() {
  cancelled_ = true;
}

}  // namespace convscope::ui
