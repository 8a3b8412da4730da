// The one worker thread of the window. It owns the compute device (the GPU, or the CPU cores
// that CPU variants time) and runs every long piece of work, one job at a time, first come first
// served: live inference, benchmark sweeps, profiles, and loading the model and the test set. So
// no op time is measured while another job computes, and the GUI thread only queues jobs and
// takes their results, which come back as queued calls on the GUI thread.
//
// Two kinds of job have a policy of their own:
//  - Live inference coalesces: a newer picture replaces one still waiting, so a moving pen never
//    builds a backlog.
//  - A sweep takes turns: between two repetitions it calls JobContext::yieldTurn(), which runs the
//    jobs that were waiting at that moment (live inference, a load, a profile; never a second
//    sweep) on this same thread, then goes on. The prediction follows the pen during a long sweep
//    and neither timing is disturbed.
// Every job learns which other kinds of job were queued or running while it was (othersInProgress),
// so the window can say so next to a time. Each job can be cancelled: a waiting one is dropped at
// once, a running one is told (JobContext::cancelled) and stops at its next step. Destruction
// drops the waiting jobs, cancels the running one and joins the thread: prompt, since every job
// checks for cancel between its steps.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

class QThread;

namespace convscope::ui {

enum class JobKind { LiveInference, Sweep, Profile, TestSetLoad, UserKernel, TestSetEvaluation, Occlusion };

// "live inference", "sweep", "profile", "test-set load", "your kernel", "test-set evaluation",
// "occlusion map".
std::string jobKindName(JobKind kind);

class JobRunner;

// What a running job may ask of the runner; used on the worker thread only.
class JobContext {
 public:
  // The job was cancelled, or the runner is going away: stop at the next step.
  bool cancelled() const;
  // A newer live inference is waiting to replace this one (live inference only).
  bool replacementWaiting() const;
  // Sent to the job's `progressed` on the GUI thread; percent < 0: no percentage.
  void progress(int percent, const QString& message);
  // Runs the jobs that were waiting when it was called, except sweeps, then returns; false when
  // this job was cancelled meanwhile. Only a sweep takes turns: for other jobs it only checks.
  bool yieldTurn();
  // The other kinds of job that were queued or running at some time during this job, sorted.
  std::vector<JobKind> othersInProgress() const;

 private:
  friend class JobRunner;
  struct Entry;
  JobContext(JobRunner& runner, Entry& entry) : runner_(runner), entry_(entry) {}
  JobRunner& runner_;
  Entry& entry_;
};

class JobRunner : public QObject {
  Q_OBJECT

 public:
  using JobId = quint64;  // 0 is no job

  struct Job {
    JobKind kind = JobKind::LiveInference;
    // Runs on the worker thread, alone on the device. What it returns then runs on the GUI
    // thread. It must capture data (values, shared pointers), never a widget.
    std::function<std::function<void()>(JobContext&)> work;
    // GUI thread: `work` threw; the message is the exception's.
    std::function<void(const QString& message)> failed;
    // GUI thread: the job ended without running (cancelled while waiting, replaced by a newer one).
    std::function<void()> dropped;
    // GUI thread: what the job reported with JobContext::progress.
    std::function<void(int percent, const QString& message)> progressed;
  };

  explicit JobRunner(QObject* parent = nullptr);
  ~JobRunner() override;  // drops the waiting jobs, cancels the running one, joins the thread

  // Queues `job`. Its GUI-thread calls go to nothing once `receiver` is destroyed.
  JobId submit(QObject* receiver, Job job);
  // A waiting job is dropped (its `dropped` is called, queued); a running one is told to stop.
  void cancel(JobId id);

  // Kinds of the jobs queued or running now, in the order they were submitted (for tests).
  std::vector<JobKind> jobsInProgress() const;
  bool idle() const { return jobsInProgress().empty(); }

  // For tests: called on the thread that runs each job, just before the job runs (a test can look
  // at the thread, or sleep to make a job slow). Empty to remove. Applies to every runner.
  static void setBeforeEachJobForTests(std::function<void(JobKind)> hook);

 private:
  friend class JobContext;
  using Entry = JobContext::Entry;

  void workerLoop();
  void run(const std::shared_ptr<Entry>& entry);  // worker thread
  bool runWaitingJobs(Entry& yielding);           // worker thread: JobContext::yieldTurn
  void post(std::function<void()> call);          // to the GUI thread, queued
  void forget(const Entry& entry);                // under mutex_: the entry is no longer in progress

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Entry>> waiting_;
  std::vector<std::shared_ptr<Entry>> running_;  // the job running, and the sweep it runs inside of
  std::vector<std::shared_ptr<Entry>> inProgress_;
  JobId lastId_ = 0;
  std::atomic<bool> stopping_{false};
  QThread* worker_;
};

}  // namespace convscope::ui
