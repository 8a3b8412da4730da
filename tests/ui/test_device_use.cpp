// One device, several jobs: live inference, sweeps and profiles take turns through the
// DeviceUseCoordinator, first come first served, so no op time is measured while another job
// computes; a sweep gives the device up between repetitions; each job learns who else was in
// progress, and the window says so next to the op time.
#include <gtest/gtest.h>

#include <QLabel>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/core/model/onnx_loader.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/prediction_panel.h"
#include "ui/inference/device_use_coordinator.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_panel.h"

namespace convscope::testing {
namespace {

using ui::DeviceJob;
using ui::DeviceUseCoordinator;
using namespace std::chrono_literals;

// Polls `condition` for up to five seconds.
template <typename Condition>
bool eventually(Condition condition) {
  for (int i = 0; i < 500 && !condition(); ++i) std::this_thread::sleep_for(10ms);
  return condition();
}

TEST(DeviceUseCoordinator, JobsNeverHoldTheDeviceAtTheSameTime) {
  DeviceUseCoordinator coordinator;
  std::atomic<int> holding{0}, mostAtOnce{0};
  std::vector<std::thread> threads;
  for (const DeviceJob job : {DeviceJob::LiveInference, DeviceJob::Sweep, DeviceJob::Profile, DeviceJob::LiveInference})
    threads.emplace_back([&, job] {
      for (int i = 0; i < 50; ++i) {
        DeviceUseCoordinator::Lease lease(coordinator, job);
        const int now = ++holding;
        int seen = mostAtOnce.load();
        while (now > seen && !mostAtOnce.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(100us);
        --holding;
        if (job == DeviceJob::Sweep) lease.yieldTurn();
      }
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mostAtOnce.load(), 1);
  EXPECT_FALSE(coordinator.deviceBusy());
  EXPECT_TRUE(coordinator.jobsInProgress().empty());
}

TEST(DeviceUseCoordinator, AWaitingJobRunsWhenTheSweepYieldsAndBothLearnOfEachOther) {
  DeviceUseCoordinator coordinator;
  std::mutex logMutex;
  std::vector<std::string> log;
  const auto note = [&](const std::string& entry) {
    const std::lock_guard lock(logMutex);
    log.push_back(entry);
  };
  std::vector<DeviceJob> sweepSaw, liveSaw;
  std::atomic<bool> sweepHolds{false};
  std::thread sweep([&] {
    DeviceUseCoordinator::Lease lease(coordinator, DeviceJob::Sweep);
    note("sweep 1");
    sweepHolds = true;
    // Holds on until the live inference is waiting for its turn.
    eventually([&] { return coordinator.jobsInProgress().size() == 2; });
    std::this_thread::sleep_for(20ms);
    note("sweep 1 done");
    lease.yieldTurn();
    note("sweep 2");
    sweepSaw = lease.othersInProgress();
  });
  ASSERT_TRUE(eventually([&] { return sweepHolds.load(); }));
  std::thread live([&] {
    DeviceUseCoordinator::Lease lease(coordinator, DeviceJob::LiveInference);
    note("live");
    liveSaw = lease.othersInProgress();
  });
  sweep.join();
  live.join();
  EXPECT_EQ(log, (std::vector<std::string>{"sweep 1", "sweep 1 done", "live", "sweep 2"}));
  EXPECT_EQ(sweepSaw, std::vector<DeviceJob>{DeviceJob::LiveInference});
  EXPECT_EQ(liveSaw, std::vector<DeviceJob>{DeviceJob::Sweep});
}

TEST(DeviceUseCoordinator, AJobAloneSeesNoOneElse) {
  DeviceUseCoordinator coordinator;
  DeviceUseCoordinator::Lease lease(coordinator, DeviceJob::Profile);
  EXPECT_TRUE(coordinator.deviceBusy());
  EXPECT_TRUE(lease.othersInProgress().empty());
  lease.yieldTurn();  // nobody waits: the turn comes straight back
  EXPECT_TRUE(coordinator.deviceBusy());
}

// Waits up to 30 s for `done`; a thread still stuck waiting for the device then can be neither
// joined nor left behind, so the test fails and the process ends.
void awaitOrDie(std::future<void>& done, const char* what) {
  if (done.wait_for(30s) == std::future_status::ready) return;
  ADD_FAILURE() << what;
  std::fflush(stdout);
  std::_Exit(1);
}

TEST(DeviceUseCoordinator, AJobToldToStopGivesUpItsWaitAndTheTurnsGoOnWithoutIt) {
  DeviceUseCoordinator coordinator;
  auto profile = std::make_unique<DeviceUseCoordinator::Lease>(coordinator, DeviceJob::Profile);
  std::atomic<bool> stop{false}, liveHeld{true}, sweepHeld{false};
  std::promise<void> liveDone, sweepDone;
  std::future<void> liveFinished = liveDone.get_future(), sweepFinished = sweepDone.get_future();
  std::thread live([&] {
    DeviceUseCoordinator::Lease lease(coordinator, DeviceJob::LiveInference, &stop);
    liveHeld = lease.held();
    liveDone.set_value();
  });
  ASSERT_TRUE(eventually([&] { return coordinator.jobsInProgress().size() == 2; }));
  stop = true;
  coordinator.wakeWaiters();
  awaitOrDie(liveFinished, "the live inference still waits for the profile's turn");
  live.join();
  EXPECT_FALSE(liveHeld.load()) << "it gave up without the device";
  EXPECT_TRUE(coordinator.deviceBusy()) << "the profile holds the device still";

  // The given-up turn is skipped: the next job gets the device once the profile gives it back.
  std::thread sweep([&] {
    DeviceUseCoordinator::Lease lease(coordinator, DeviceJob::Sweep);
    sweepHeld = lease.held();
    sweepDone.set_value();
  });
  ASSERT_TRUE(eventually([&] { return coordinator.jobsInProgress().size() == 2; }));
  profile.reset();
  awaitOrDie(sweepFinished, "the turn given up was never skipped: the sweep waits for it");
  sweep.join();
  EXPECT_TRUE(sweepHeld.load());
  EXPECT_FALSE(coordinator.deviceBusy());
  EXPECT_TRUE(coordinator.jobsInProgress().empty());
}

TEST(DeviceUseCoordinator, ASweepToldToStopWhileYieldingGivesUpItsNextTurn) {
  DeviceUseCoordinator coordinator;
  std::atomic<bool> stop{false}, heldAfterYield{true}, yielded{false};
  std::promise<void> sweepDone;
  std::future<void> sweepFinished = sweepDone.get_future();
  std::unique_ptr<DeviceUseCoordinator::Lease> live;
  std::thread sweep([&] {
    DeviceUseCoordinator::Lease lease(coordinator, DeviceJob::Sweep, &stop);
    // The live inference asks for the device while the sweep holds it.
    EXPECT_TRUE(eventually([&] { return coordinator.jobsInProgress().size() == 2; }));
    yielded = true;
    heldAfterYield = lease.yieldTurn();  // the live inference takes the turn and keeps it
    sweepDone.set_value();
  });
  ASSERT_TRUE(eventually([&] { return coordinator.deviceBusy(); }));
  live = std::make_unique<DeviceUseCoordinator::Lease>(coordinator, DeviceJob::LiveInference);
  ASSERT_TRUE(yielded.load());
  stop = true;
  coordinator.wakeWaiters();
  awaitOrDie(sweepFinished, "the sweep still waits for the live inference's turn");
  sweep.join();
  EXPECT_FALSE(heldAfterYield.load());
  EXPECT_TRUE(coordinator.deviceBusy()) << "the live inference holds the device still";
  live.reset();
  EXPECT_FALSE(coordinator.deviceBusy());
  EXPECT_TRUE(coordinator.jobsInProgress().empty());
}

TEST(DeviceUse, AnInferenceControllerGoingAwayDoesNotWaitForAnotherJobsTurn) {
  const auto model = loadOnnxModel(modelPath("course-high").toStdString());
  std::atomic<bool> release{false}, released{false};
  std::promise<void> holding;
  std::future<void> holds = holding.get_future();
  // A profile that holds the device for 30 s unless released sooner.
  std::thread profile([&] {
    DeviceUseCoordinator::Lease lease(DeviceUseCoordinator::shared(), DeviceJob::Profile);
    holding.set_value();
    for (int i = 0; i < 3000 && !release; ++i) std::this_thread::sleep_for(10ms);
    released = true;
  });
  holds.wait();
  auto controller = std::make_unique<ui::InferenceController>();
  controller->setModel(model);
  controller->setVariant(defaultConvVariant());
  ui::InputImage picture;
  picture.image = GrayImage{48, 48, std::vector<float>(48 * 48, 0.5f)};
  controller->classify(picture);
  ASSERT_TRUE(eventually([] { return DeviceUseCoordinator::shared().jobsInProgress().size() == 2; }));
  controller.reset();  // its worker is waiting for the profile's turn
  EXPECT_FALSE(released.load()) << "the controller waited for the profile to give the device back";
  release = true;
  profile.join();
  EXPECT_TRUE(DeviceUseCoordinator::shared().jobsInProgress().empty());
}

TEST(DeviceUse, ThePredictionDuringASweepSaysSoAndTheSweepSaysTheLiveInferenceTookTurns) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->timing();
  // Many short repetitions: the sweep gives the device up after each, so the picture waits for one
  // inference of at most 4 images, while the whole sweep (1000 repetitions of each batch size)
  // lasts far longer than the picture's turn, during which it cannot go on; it is cancelled once
  // the picture is shown, so its length costs nothing.
  timing->controls()->setCheckedVariants({"cpu-reference"});
  timing->controls()->setBatches("1, 2, 3, 4");
  timing->controls()->setRepeats(1000);
  ASSERT_TRUE(timing->startSweep());
  ASSERT_TRUE(QTest::qWaitFor([] { return !DeviceUseCoordinator::shared().jobsInProgress().empty(); }, 10000));
  ASSERT_TRUE(window->selectTestImage(5));
  ASSERT_TRUE(waitForInference(*window, 60000));
  const bool sweepStillRunning = timing->sweepRunning();
  const auto outcome = window->inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->input.testIndex, 5);
  ASSERT_TRUE(sweepStillRunning) << "the picture waited for the whole sweep: a sweep must give the device up "
                                    "between repetitions";
  EXPECT_EQ(outcome->busyWith, std::vector<std::string>{"sweep"});
  EXPECT_TRUE(window->prediction()->timesText().contains("while a sweep was running"))
      << window->prediction()->timesText().toStdString();

  // The sweep stops after the repetition in flight and says who took turns with it.
  timing->cancelSweep();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));
  bool said = false;
  for (const QLabel* label : timing->controls()->findChildren<QLabel*>())
    said = said || label->text().contains("live inference took turns on the device");
  EXPECT_TRUE(said) << "the sweep's status says the live inference took turns with it";
  EXPECT_TRUE(DeviceUseCoordinator::shared().jobsInProgress().empty());

  // Alone again: no note.
  ASSERT_TRUE(window->selectTestImage(6));
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_TRUE(window->inference()->lastOutcome()->busyWith.empty());
  EXPECT_FALSE(window->prediction()->timesText().contains("while a"))
      << window->prediction()->timesText().toStdString();
}

}  // namespace
}  // namespace convscope::testing
