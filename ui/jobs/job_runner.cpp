#include "ui/jobs/job_runner.h"

#include <QPointer>
#include <QThread>

#include <algorithm>
#include <exception>
#include <set>
#include <utility>

namespace convscope::ui {
namespace {

// A sweep takes turns with the jobs that wait for it; the others run to their end.
bool takesTurns(JobKind kind) {
  return kind == JobKind::Sweep;
}

// A newer live inference replaces one still waiting.
bool coalesces(JobKind kind) {
  return kind == JobKind::LiveInference;
}

std::mutex hookMutex;
std::function<void(JobKind)>& beforeEachJob() {
  static std::function<void(JobKind)> hook;
  return hook;
}

}  // namespace

std::string jobKindName(JobKind kind) {
  switch (kind) {
    case JobKind::LiveInference:
      return "live inference";
    case JobKind::Sweep:
      return "sweep";
    case JobKind::Profile:
      return "profile";
    case JobKind::TestSetLoad:
      return "test-set load";
    case JobKind::UserKernel:
      return "your kernel";
    case JobKind::TestSetEvaluation:
      return "test-set evaluation";
    case JobKind::Occlusion:
      return "occlusion map";
  }
  return "job";
}

struct JobContext::Entry {
  JobRunner::JobId id = 0;
  JobRunner::Job job;
  std::atomic<bool> cancelled{false};
  std::set<JobKind> seen;  // under the runner's mutex: other kinds in progress during this job
};

bool JobContext::cancelled() const {
  return entry_.cancelled.load() || runner_.stopping_.load();
}

bool JobContext::replacementWaiting() const {
  const std::lock_guard lock(runner_.mutex_);
  return std::any_of(runner_.waiting_.begin(), runner_.waiting_.end(),
                     [&](const auto& other) { return other->job.kind == entry_.job.kind; });
}

void JobContext::progress(int percent, const QString& message) {
  if (entry_.job.progressed)
    runner_.post([progressed = entry_.job.progressed, percent, message] { progressed(percent, message); });
}

bool JobContext::yieldTurn() {
  if (takesTurns(entry_.job.kind)) runner_.runWaitingJobs(entry_);
  return !cancelled();
}

std::vector<JobKind> JobContext::othersInProgress() const {
  const std::lock_guard lock(runner_.mutex_);
  return {entry_.seen.begin(), entry_.seen.end()};
}

JobRunner::JobRunner(QObject* parent) : QObject(parent) {
  worker_ = QThread::create([this] { workerLoop(); });
  worker_->setObjectName("jobs");
  worker_->start();
}

JobRunner::~JobRunner() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    waiting_.clear();
    for (const auto& entry : running_) entry->cancelled = true;
  }
  wake_.notify_all();
  worker_->wait();  // the running job stops at its next step
  delete worker_;
}

JobRunner::JobId JobRunner::submit(QObject* receiver, Job job) {
  // Every GUI-thread call of the job checks that its receiver is still there.
  const QPointer<QObject> alive(receiver);
  const auto guard = [&alive](auto& call) {
    if (call)
      call = [alive, call = std::move(call)](auto&&... args) {
        if (alive) call(std::forward<decltype(args)>(args)...);
      };
  };
  guard(job.failed);
  guard(job.dropped);
  guard(job.progressed);
  auto work = std::move(job.work);
  job.work = [alive, work = std::move(work)](JobContext& context) -> std::function<void()> {
    std::function<void()> deliver = work(context);
    if (!deliver) return {};
    return [alive, deliver = std::move(deliver)] {
      if (alive) deliver();
    };
  };

  auto entry = std::make_shared<Entry>();
  entry->job = std::move(job);
  std::vector<std::function<void()>> dropped;
  {
    const std::lock_guard lock(mutex_);
    entry->id = ++lastId_;
    const JobKind kind = entry->job.kind;
    if (coalesces(kind)) {
      for (auto it = waiting_.begin(); it != waiting_.end();) {
        if ((*it)->job.kind != kind) {
          ++it;
          continue;
        }
        if ((*it)->job.dropped) dropped.push_back((*it)->job.dropped);
        forget(**it);
        it = waiting_.erase(it);
      }
    }
    for (const auto& other : inProgress_)
      if (other->job.kind != kind) {  // a live inference is never "busy with" the one before it
        other->seen.insert(kind);
        entry->seen.insert(other->job.kind);
      }
    inProgress_.push_back(entry);
    waiting_.push_back(entry);
  }
  wake_.notify_all();
  for (auto& call : dropped) post(std::move(call));
  return entry->id;
}

void JobRunner::cancel(JobId id) {
  std::function<void()> dropped;
  {
    const std::lock_guard lock(mutex_);
    const auto waiting = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& e) { return e->id == id; });
    if (waiting != waiting_.end()) {
      dropped = (*waiting)->job.dropped;
      forget(**waiting);
      waiting_.erase(waiting);
    }
    for (const auto& entry : running_)
      if (entry->id == id) entry->cancelled = true;
  }
  if (dropped) post(std::move(dropped));
}

std::vector<JobKind> JobRunner::jobsInProgress() const {
  const std::lock_guard lock(mutex_);
  std::vector<JobKind> kinds;
  for (const auto& entry : inProgress_) kinds.push_back(entry->job.kind);
  return kinds;
}

void JobRunner::setBeforeEachJobForTests(std::function<void(JobKind)> hook) {
  const std::lock_guard lock(hookMutex);
  beforeEachJob() = std::move(hook);
}

void JobRunner::workerLoop() {
  for (;;) {
    std::shared_ptr<Entry> entry;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      entry = std::move(waiting_.front());
      waiting_.pop_front();
      running_.push_back(entry);
    }
    run(entry);
  }
}

bool JobRunner::runWaitingJobs(Entry& yielding) {
  // Only the jobs that were waiting when the turn was given up: a pen that keeps moving gets one
  // inference per turn, and the sweep goes on in between.
  JobId horizon = 0;
  {
    const std::lock_guard lock(mutex_);
    horizon = lastId_;
  }
  for (;;) {
    std::shared_ptr<Entry> next;
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) return false;
      const auto it = std::find_if(waiting_.begin(), waiting_.end(),
                                   [&](const auto& e) { return e->id <= horizon && !takesTurns(e->job.kind); });
      if (it == waiting_.end()) break;
      next = *it;
      waiting_.erase(it);
      running_.push_back(next);
    }
    run(next);
  }
  return !yielding.cancelled;
}

void JobRunner::run(const std::shared_ptr<Entry>& entry) {
  {
    std::function<void(JobKind)> hook;
    {
      const std::lock_guard lock(hookMutex);
      hook = beforeEachJob();
    }
    if (hook) hook(entry->job.kind);
  }
  JobContext context(*this, *entry);
  std::function<void()> deliver;
  QString error;
  try {
    deliver = entry->job.work(context);
  } catch (const std::exception& e) {
    error = QString::fromStdString(e.what());
  } catch (...) {
    error = tr("an unknown error");
  }
  {
    // Out of the books before the result is posted: what the GUI thread queues in answer to it
    // does not see this job in progress.
    const std::lock_guard lock(mutex_);
    running_.erase(std::find(running_.begin(), running_.end(), entry));
    forget(*entry);
  }
  if (!error.isEmpty()) {
    if (entry->job.failed) post([failed = entry->job.failed, error] { failed(error); });
  } else if (deliver) {
    post(std::move(deliver));
  }
}

void JobRunner::forget(const Entry& entry) {
  const auto it =
      std::find_if(inProgress_.begin(), inProgress_.end(), [&](const auto& e) { return e.get() == &entry; });
  if (it != inProgress_.end()) inProgress_.erase(it);
}

void JobRunner::post(std::function<void()> call) {
  QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection);
}

}  // namespace convscope::ui
