// One worker thread owns the device: live inference, sweeps, profiles and loading the model and
// the test set run on it as jobs, one at a time and first come first served, so no op time is
// measured while another job computes; a sweep gives its turn up between repetitions; a newer
// live inference replaces one still waiting; each job learns who else was in progress, and the
// window says so next to the op time. The GUI thread never waits for a job: the window opens and
// answers while the test set and the model load.
#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QLabel>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/explore_view.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/prediction_panel.h"
#include "ui/common/error_banner.h"
#include "ui/input/dataset_browser.h"
#include "ui/input/input_panel.h"
#include "ui/jobs/job_runner.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_panel.h"

namespace convscope::testing {
namespace {

using ui::JobContext;
using ui::JobKind;
using ui::JobRunner;
using namespace std::chrono_literals;

// Polls `condition` for up to five seconds without running the GUI thread's events: for waits
// on the worker, or on the GUI thread while the worker is held up on purpose.
template <typename Condition>
bool eventually(Condition condition) {
  for (int i = 0; i < 500 && !condition(); ++i) std::this_thread::sleep_for(10ms);
  return condition();
}

// A job whose work is `work` and whose result, on the GUI thread, is `delivered`.
JobRunner::Job job(JobKind kind, std::function<void(JobContext&)> work, std::function<void()> delivered = {}) {
  JobRunner::Job job;
  job.kind = kind;
  job.work = [work = std::move(work), delivered = std::move(delivered)](JobContext& context) -> std::function<void()> {
    work(context);
    return delivered;
  };
  return job;
}

// Sets the runners' test hook for the life of the object.
struct BeforeEachJob {
  explicit BeforeEachJob(std::function<void(JobKind)> hook) { JobRunner::setBeforeEachJobForTests(std::move(hook)); }
  ~BeforeEachJob() { JobRunner::setBeforeEachJobForTests({}); }
};

TEST(JobRunner, RunsOneJobAtATimeOnOneThreadOtherThanTheGuiThreadAndDeliversOnTheGuiThread) {
  JobRunner runner;
  QObject receiver;
  std::atomic<int> holding{0}, mostAtOnce{0};
  std::mutex mutex;
  std::set<std::thread::id> workers;
  std::vector<int> ranInOrder;
  int delivered = 0, deliveredOnGuiThread = 0;
  const auto use = [&](int index) {
    const int now = ++holding;
    int seen = mostAtOnce.load();
    while (now > seen && !mostAtOnce.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(200us);
    --holding;
    const std::lock_guard lock(mutex);
    workers.insert(std::this_thread::get_id());
    ranInOrder.push_back(index);
  };
  const auto deliver = [&] {
    ++delivered;
    if (QThread::currentThread() == receiver.thread()) ++deliveredOnGuiThread;
  };
  constexpr int kJobs = 40;
  for (int i = 0; i < kJobs; ++i) {
    const JobKind kind = std::vector{JobKind::Profile, JobKind::UserKernel, JobKind::TestSetLoad}[i % 3];
    runner.submit(&receiver, job(
                                 kind, [&, i](JobContext&) { use(i); }, deliver));
  }
  // A sweep that takes turns: it holds the device only between two yields.
  runner.submit(&receiver, job(
                               JobKind::Sweep,
                               [&](JobContext& context) {
                                 for (int step = 0; step < 20; ++step) {
                                   use(kJobs + step);
                                   context.yieldTurn();
                                 }
                               },
                               deliver));
  for (int i = 0; i < 10; ++i)
    runner.submit(&receiver, job(
                                 JobKind::Profile, [&, i](JobContext&) { use(kJobs + 20 + i); }, deliver));
  ASSERT_TRUE(QTest::qWaitFor([&] { return delivered == kJobs + 11; }, 30000));
  EXPECT_EQ(mostAtOnce.load(), 1);
  EXPECT_EQ(deliveredOnGuiThread, delivered);
  ASSERT_EQ(workers.size(), 1u) << "one worker thread";
  EXPECT_NE(*workers.begin(), std::this_thread::get_id());
  // First come, first served: the jobs before the sweep in order, then the sweep's steps with the
  // later jobs in between them.
  ASSERT_EQ(ranInOrder.size(), static_cast<size_t>(kJobs + 30));
  for (int i = 0; i <= kJobs; ++i) EXPECT_EQ(ranInOrder[static_cast<size_t>(i)], i);
  EXPECT_TRUE(runner.idle());
}

TEST(JobRunner, AJobWaitingWhenTheSweepYieldsRunsBetweenItsStepsAndBothLearnOfEachOther) {
  JobRunner runner;
  QObject receiver;
  std::mutex logMutex;
  std::vector<std::string> log;
  const auto note = [&](const std::string& entry) {
    const std::lock_guard lock(logMutex);
    log.push_back(entry);
  };
  std::vector<JobKind> sweepSaw, liveSaw;
  std::atomic<bool> sweepHolds{false};
  int delivered = 0;
  runner.submit(&receiver, job(
                               JobKind::Sweep,
                               [&](JobContext& context) {
                                 note("sweep 1");
                                 sweepHolds = true;
                                 // Holds on until the live inference is waiting for its turn.
                                 eventually([&] { return runner.jobsInProgress().size() == 2; });
                                 note("sweep 1 done");
                                 EXPECT_TRUE(context.yieldTurn());
                                 note("sweep 2");
                                 sweepSaw = context.othersInProgress();
                               },
                               [&] { ++delivered; }));
  ASSERT_TRUE(eventually([&] { return sweepHolds.load(); }));
  runner.submit(&receiver, job(
                               JobKind::LiveInference,
                               [&](JobContext& context) {
                                 note("live");
                                 liveSaw = context.othersInProgress();
                               },
                               [&] { ++delivered; }));
  ASSERT_TRUE(QTest::qWaitFor([&] { return delivered == 2; }, 10000));
  EXPECT_EQ(log, (std::vector<std::string>{"sweep 1", "sweep 1 done", "live", "sweep 2"}));
  EXPECT_EQ(sweepSaw, std::vector<JobKind>{JobKind::LiveInference});
  EXPECT_EQ(liveSaw, std::vector<JobKind>{JobKind::Sweep});
}

TEST(JobRunner, AJobAloneSeesNoOneElseAndALiveInferenceIsNotBusyWithTheOneBeforeIt) {
  JobRunner runner;
  QObject receiver;
  std::vector<JobKind> profileSaw{JobKind::Sweep}, firstSaw{JobKind::Sweep}, secondSaw{JobKind::Sweep};
  bool yielded = false;
  int delivered = 0;
  runner.submit(&receiver, job(
                               JobKind::Profile,
                               [&](JobContext& context) {
                                 yielded = context.yieldTurn();  // nobody waits: it goes straight on
                                 profileSaw = context.othersInProgress();
                               },
                               [&] { ++delivered; }));
  ASSERT_TRUE(QTest::qWaitFor([&] { return delivered == 1; }, 10000));
  EXPECT_TRUE(yielded);
  EXPECT_TRUE(profileSaw.empty());

  std::atomic<bool> firstRuns{false};
  runner.submit(&receiver, job(
                               JobKind::LiveInference,
                               [&](JobContext& context) {
                                 firstRuns = true;
                                 eventually([&] { return context.replacementWaiting(); });
                                 firstSaw = context.othersInProgress();
                               },
                               [&] { ++delivered; }));
  ASSERT_TRUE(eventually([&] { return firstRuns.load(); }));
  runner.submit(&receiver,
                job(
                    JobKind::LiveInference, [&](JobContext& context) { secondSaw = context.othersInProgress(); },
                    [&] { ++delivered; }));
  ASSERT_TRUE(QTest::qWaitFor([&] { return delivered == 3; }, 10000));
  EXPECT_TRUE(firstSaw.empty());
  EXPECT_TRUE(secondSaw.empty());
}

// A job that holds the runner until `release` is set (or 30 s pass), saying when it has begun.
JobRunner::Job holdingJob(JobKind kind, std::atomic<bool>& began, std::atomic<bool>& release) {
  return job(kind, [&](JobContext&) {
    began = true;
    for (int i = 0; i < 3000 && !release; ++i) std::this_thread::sleep_for(10ms);
  });
}

TEST(JobRunner, ACancelledWaitingJobIsDroppedAtOnceAndTheJobsAfterItGoOn) {
  JobRunner runner;
  QObject receiver;
  std::atomic<bool> profileBegan{false}, release{false}, cancelledRan{false};
  runner.submit(&receiver, holdingJob(JobKind::Profile, profileBegan, release));
  ASSERT_TRUE(eventually([&] { return profileBegan.load(); }));
  bool dropped = false;
  JobRunner::Job waiting = job(JobKind::UserKernel, [&](JobContext&) { cancelledRan = true; });
  waiting.dropped = [&] { dropped = true; };
  const JobRunner::JobId id = runner.submit(&receiver, std::move(waiting));
  bool sweepDelivered = false, sweepSawCancel = false;
  std::atomic<bool> sweepBegan{false};
  const JobRunner::JobId sweep = runner.submit(&receiver, job(
                                                              JobKind::Sweep,
                                                              [&](JobContext& context) {
                                                                sweepBegan = true;
                                                                // Steps until it is told to stop.
                                                                for (int i = 0; i < 30000 && context.yieldTurn(); ++i)
                                                                  std::this_thread::sleep_for(1ms);
                                                                sweepSawCancel = context.cancelled();
                                                              },
                                                              [&] { sweepDelivered = true; }));

  runner.cancel(id);
  ASSERT_TRUE(QTest::qWaitFor([&] { return dropped; }, 5000)) << "dropped while the profile still runs";
  EXPECT_EQ(runner.jobsInProgress(), (std::vector<JobKind>{JobKind::Profile, JobKind::Sweep}));
  release = true;
  ASSERT_TRUE(eventually([&] { return runner.jobsInProgress() == std::vector<JobKind>{JobKind::Sweep}; }));
  // The sweep counts as in progress while it still waits for the worker; cancelled then, it would
  // be dropped, not told. Wait until it runs.
  ASSERT_TRUE(eventually([&] { return sweepBegan.load(); }));

  // A running job is told, and stops at its next step.
  runner.cancel(sweep);
  ASSERT_TRUE(QTest::qWaitFor([&] { return sweepDelivered; }, 5000));
  EXPECT_TRUE(sweepSawCancel);
  EXPECT_FALSE(cancelledRan.load()) << "the cancelled job never ran";
  EXPECT_TRUE(runner.idle());
}

TEST(JobRunner, ANewerLiveInferenceReplacesTheOneWaitingAndTheNewestIsDone) {
  JobRunner runner;
  QObject receiver;
  std::atomic<bool> began{false}, release{false};
  runner.submit(&receiver, holdingJob(JobKind::Profile, began, release));
  ASSERT_TRUE(eventually([&] { return began.load(); }));
  constexpr int kPictures = 50;
  std::vector<int> ran;  // on the worker, read once it is idle
  int dropped = 0, delivered = 0;
  bool loadRan = false;
  for (int i = 0; i < kPictures; ++i) {
    JobRunner::Job live = job(
        JobKind::LiveInference, [&, i](JobContext&) { ran.push_back(i); }, [&] { ++delivered; });
    live.dropped = [&] { ++dropped; };
    runner.submit(&receiver, std::move(live));
    // Coalescing replaces only a waiting live inference, never another kind of job.
    if (i == kPictures / 2) runner.submit(&receiver, job(JobKind::TestSetLoad, [&](JobContext&) { loadRan = true; }));
  }
  EXPECT_EQ(runner.jobsInProgress(),
            (std::vector<JobKind>{JobKind::Profile, JobKind::TestSetLoad, JobKind::LiveInference}));
  release = true;
  ASSERT_TRUE(QTest::qWaitFor([&] { return delivered + dropped == kPictures && runner.idle(); }, 10000));
  EXPECT_EQ(ran, std::vector<int>{kPictures - 1});
  EXPECT_EQ(dropped, kPictures - 1);
  EXPECT_TRUE(loadRan);
}

TEST(JobRunner, GoingAwayIsPromptItCancelsTheRunningJobAndDropsTheWaitingOnes) {
  auto runner = std::make_unique<JobRunner>();
  QObject receiver;
  std::atomic<bool> began{false}, waitingRan{false};
  bool delivered = false;
  runner->submit(&receiver, job(
                                JobKind::Sweep,
                                [&](JobContext& context) {
                                  began = true;
                                  for (int i = 0; i < 30000 && context.yieldTurn(); ++i)
                                    std::this_thread::sleep_for(1ms);
                                },
                                [&] { delivered = true; }));
  runner->submit(&receiver, job(JobKind::Sweep, [&](JobContext&) { waitingRan = true; }));
  ASSERT_TRUE(eventually([&] { return began.load(); }));
  QElapsedTimer clock;
  clock.start();
  runner.reset();
  EXPECT_LT(clock.elapsed(), 5000) << "the sweep stopped at its next step";
  QTest::qWait(50);
  EXPECT_FALSE(waitingRan.load());
  EXPECT_FALSE(delivered) << "nothing arrives from a runner that is gone";
}

TEST(JobRunner, AJobThatThrowsReportsItsMessageOnTheGuiThreadAndTheNextJobRuns) {
  JobRunner runner;
  QObject receiver;
  QString message;
  JobRunner::Job failing =
      job(JobKind::TestSetLoad, [](JobContext&) { throw std::runtime_error("x.onnx: truncated"); });
  failing.failed = [&](const QString& error) { message = error; };
  runner.submit(&receiver, std::move(failing));
  bool nextRan = false;
  runner.submit(&receiver, job(
                               JobKind::Profile, [](JobContext&) {}, [&] { nextRan = true; }));
  ASSERT_TRUE(QTest::qWaitFor([&] { return nextRan; }, 10000));
  EXPECT_EQ(message, "x.onnx: truncated");
}

TEST(DeviceUse, ThePredictionDuringASweepSaysSoAndTheSweepSaysTheLiveInferenceTookTurns) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  // Many short repetitions: the sweep gives the device up after each, so the picture waits for one
  // inference of at most 4 images, while the whole sweep (1000 repetitions of each batch size)
  // lasts far longer than the picture's turn, during which it cannot go on; it is cancelled once
  // the picture is shown, so its length costs nothing.
  timing->controls()->setCheckedVariants({"cpu-reference"});
  timing->controls()->setBatches("1, 2, 3, 4");
  timing->controls()->setRepeats(1000);
  ASSERT_TRUE(timing->startSweep());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->jobs()->idle(); }, 10000));
  ASSERT_TRUE(window->selectTestImage(5));
  ASSERT_TRUE(waitForInference(*window, 60000));
  const bool sweepStillRunning = timing->sweepRunning();
  const auto outcome = window->inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->input.testIndex, 5);
  ASSERT_TRUE(sweepStillRunning) << "the picture waited for the whole sweep: a sweep must give the device up "
                                    "between repetitions";
  EXPECT_EQ(outcome->busyWith, std::vector<std::string>{"sweep"});
  EXPECT_TRUE(
      window->view<gui::ExploreView>("explore")->prediction()->timesText().contains("while a sweep was running"))
      << window->view<gui::ExploreView>("explore")->prediction()->timesText().toStdString();

  // The sweep stops after the repetition in flight and says who took turns with it.
  timing->cancelSweep();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));
  bool said = false;
  for (const QLabel* label : timing->controls()->findChildren<QLabel*>())
    said = said || label->text().contains("live inference took turns on the device");
  EXPECT_TRUE(said) << "the sweep's status says the live inference took turns with it";
  EXPECT_TRUE(window->jobs()->idle());

  // Alone again: no note.
  ASSERT_TRUE(window->selectTestImage(6));
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_TRUE(window->inference()->lastOutcome()->busyWith.empty());
  EXPECT_FALSE(window->view<gui::ExploreView>("explore")->prediction()->timesText().contains("while a"))
      << window->view<gui::ExploreView>("explore")->prediction()->timesText().toStdString();
}

TEST(DeviceUse, ClosingTheWindowDuringASweepDoesNotWaitForTheSweep) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  timing->controls()->setCheckedVariants({"cpu-reference"});
  timing->controls()->setBatches("1, 2, 3, 4");
  timing->controls()->setRepeats(100000);  // minutes of work
  ASSERT_TRUE(timing->startSweep());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->jobs()->idle(); }, 10000));
  QTest::qWait(100);
  QElapsedTimer clock;
  clock.start();
  window.reset();
  EXPECT_LT(clock.elapsed(), 10000) << "the sweep stops after its repetition in flight";
}

// What the loads' jobs saw: the thread that ran them.
struct LoadThreads {
  std::mutex mutex;
  std::map<JobKind, QThread*> threads;
  void note(JobKind kind) {
    const std::lock_guard lock(mutex);
    threads[kind] = QThread::currentThread();
  }
  QThread* of(JobKind kind) {
    const std::lock_guard lock(mutex);
    return threads.count(kind) ? threads[kind] : nullptr;
  }
};

TEST(Loading, TheTestSetAndTheModelLoadOffTheGuiThreadWhileTheWindowAnswers) {
  constexpr auto kSlowLoad = 3000ms;
  LoadThreads seen;
  const BeforeEachJob slow([&](JobKind kind) {
    seen.note(kind);
    if (kind == JobKind::TestSetLoad) std::this_thread::sleep_for(kSlowLoad);  // a slow disk
  });
  QElapsedTimer clock;
  clock.start();
  gui::MainWindow window(gui::MainWindow::Options::with(false, false));
  const qint64 openedAfter = clock.elapsed();
  window.show();
  EXPECT_LT(openedAfter, std::chrono::milliseconds(kSlowLoad).count()) << "the window did not wait for the test set";
  EXPECT_TRUE(window.testSetLoading());
  EXPECT_EQ(window.testSet(), nullptr);
  EXPECT_TRUE(window.inputPanel()->browser()->statusText().contains("loading"))
      << window.inputPanel()->browser()->statusText().toStdString();

  // The GUI thread runs its events meanwhile: a timer keeps ticking.
  int ticksWhileLoading = 0;
  QTimer heartbeat;
  QObject::connect(&heartbeat, &QTimer::timeout, [&] {
    if (window.testSetLoading()) ++ticksWhileLoading;
  });
  heartbeat.start(10);
  ASSERT_TRUE(waitForInference(window, 60000));
  EXPECT_GT(ticksWhileLoading, 20) << "the window answered while the test set loaded";

  ASSERT_NE(window.testSet(), nullptr);
  EXPECT_EQ(window.testSet()->count(), 10000);
  ASSERT_NE(window.model(), nullptr);
  ASSERT_NE(window.inference()->lastOutcome(), nullptr);
  EXPECT_EQ(window.inference()->lastOutcome()->input.testIndex, 0) << "the first test image once both arrived";
  QThread* gui = QThread::currentThread();
  ASSERT_NE(seen.of(JobKind::TestSetLoad), nullptr);
  EXPECT_NE(seen.of(JobKind::TestSetLoad), gui);
  EXPECT_EQ(seen.of(JobKind::LiveInference), seen.of(JobKind::TestSetLoad)) << "which also runs the inference";
}

// Parsing a model needs no device: it does not wait behind the runner's long work. A later choice
// still wins over an earlier one.
TEST(Loading, AModelChosenWhileTheTestSetLoadsLoadsAtOnceAndALaterChoiceWins) {
  const BeforeEachJob slow([](JobKind kind) {
    if (kind == JobKind::TestSetLoad) std::this_thread::sleep_for(6000ms);
  });
  gui::MainWindow window(gui::MainWindow::Options::with(false, false));
  window.loadModel(modelPath("lenet5"));
  window.loadModel(modelPath("course-low"));  // supersedes lenet5
  EXPECT_TRUE(window.modelLoading());
  QElapsedTimer clock;
  clock.start();
  ASSERT_TRUE(QTest::qWaitFor([&] { return window.model() && window.model()->name == "course-low"; }, 20000));
  EXPECT_TRUE(window.testSetLoading()) << "the model arrived while the test set was still loading";
  EXPECT_LT(clock.elapsed(), 5000) << "the model waited for the test set";
  ASSERT_TRUE(waitForInference(window, 60000));
  EXPECT_EQ(window.model()->name, "course-low");
  EXPECT_EQ(window.inference()->lastOutcome()->modelName, "course-low");
}

// A broken model file is answered at once, with its name, while a long job holds the runner.
TEST(Loading, AModelThatFailsToParseIsReportedAtOnceWhileALongJobRuns) {
  QTemporaryDir dir;
  const QString broken = writeFile(dir, "broken.onnx", QByteArray("\x08\x07\x12\xff not a model", 16));
  const BeforeEachJob slow([](JobKind kind) {
    if (kind == JobKind::TestSetLoad) std::this_thread::sleep_for(5000ms);  // the runner is busy for 5 s
  });
  gui::MainWindow window(gui::MainWindow::Options::with(false, false));
  QElapsedTimer clock;
  clock.start();
  window.loadModel(broken);
  ASSERT_TRUE(QTest::qWaitFor([&] { return window.errorBanner()->message().contains("broken.onnx"); }, 20000))
      << window.errorBanner()->message().toStdString();
  EXPECT_LT(clock.elapsed(), 2000) << "the error waited for the long job";
  EXPECT_TRUE(window.testSetLoading()) << "the long job was still running when the error came";
  ASSERT_TRUE(waitForInference(window, 60000));
}

TEST(Loading, ATestSetThatFailsToLoadOnTheWorkerNamesTheFileInTheBanner) {
  QTemporaryDir data;
  writeFile(data, "t10k-images-idx3-ubyte", QByteArray("\x00\x00\x08\x03\x00\x00\x00\x05", 8));  // no sizes
  writeFile(data, "t10k-labels-idx1-ubyte", QByteArray("\x00\x00\x08\x01\x00\x00\x00\x05", 8));
  const QByteArray saved = qgetenv("CONVSCOPE_DATA");
  qputenv("CONVSCOPE_DATA", data.path().toUtf8());
  LoadThreads seen;
  const BeforeEachJob note([&](JobKind kind) { seen.note(kind); });
  gui::MainWindow window(gui::MainWindow::Options::with(false, false));
  if (saved.isEmpty())
    qunsetenv("CONVSCOPE_DATA");
  else
    qputenv("CONVSCOPE_DATA", saved);
  ASSERT_TRUE(waitForInference(window));
  EXPECT_EQ(window.testSet(), nullptr);
  ASSERT_NE(seen.of(JobKind::TestSetLoad), nullptr);
  EXPECT_NE(seen.of(JobKind::TestSetLoad), QThread::currentThread());
  const QString banner = window.errorBanner()->message();
  EXPECT_TRUE(banner.contains("No test set")) << banner.toStdString();
  EXPECT_TRUE(banner.contains("t10k-images-idx3-ubyte")) << banner.toStdString();
  EXPECT_FALSE(window.testSetLoading());
}

}  // namespace
}  // namespace convscope::testing
