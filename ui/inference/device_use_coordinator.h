// The one place that decides who may use the compute device (the GPU, or the CPU cores for CPU
// variants) for timed work. Live inference, benchmark sweeps and profiles all take a turn here,
// one at a time and first come, first served, so no op time is measured while another job is
// computing. A sweep holds the device for one repetition at a time and gives it up in between
// (yieldTurn), so the live prediction still follows the user during a long sweep; each job learns
// which other jobs were in progress while it ran, so the window can say so next to the numbers.
// A job that is told to stop (the window closes, the user cancels) gives up its wait for a turn
// instead of waiting behind a whole profile or sweep repetition.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace convscope::ui {

enum class DeviceJob { LiveInference, Sweep, Profile };

// "live inference", "sweep", "profile".
std::string deviceJobName(DeviceJob job);

class DeviceUseCoordinator {
 public:
  // The coordinator the window's workers share: there is one device per process.
  static DeviceUseCoordinator& shared();

  // One job's turn on the device: taken on construction (waiting for the jobs ahead of it),
  // given back on destruction. A lease is used by one thread. With `stop`, the wait for a turn
  // ends without one once *stop is true and wakeWaiters() has been called: held() says which.
  class Lease {
   public:
    Lease(DeviceUseCoordinator& coordinator, DeviceJob job, const std::atomic<bool>* stop = nullptr);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    // False when the wait for the turn was given up (see `stop`): the job must not use the device.
    bool held() const { return held_; }
    // Gives the device to every job that is waiting, then takes it back; false (and not held)
    // when the wait for it was given up.
    bool yieldTurn();
    // Other jobs that were in progress at some time during this lease (even if they only waited
    // or were between two of their turns), sorted, without duplicates.
    std::vector<DeviceJob> othersInProgress() const;

   private:
    DeviceUseCoordinator& coordinator_;
    DeviceJob job_;
    const std::atomic<bool>* stop_;
    uint64_t id_;
    bool held_ = false;
  };

  // Wakes every job waiting for a turn, so that those told to stop (their `stop` flag set before
  // this call) give up their wait.
  void wakeWaiters();

  // Jobs registered now (holding the device, waiting for it, or between turns).
  std::vector<DeviceJob> jobsInProgress() const;
  // True while some job holds the device (for tests).
  bool deviceBusy() const;

 private:
  uint64_t begin(DeviceJob job);  // registers the job
  void end(uint64_t id, bool held);
  // Waits for the device; false, with the ticket given up, when *stop became true meanwhile.
  bool takeTurn(std::unique_lock<std::mutex>& lock, const std::atomic<bool>* stop);
  void giveTurn();
  void noteOthers();  // under mutex_: every registered job sees every other one

  mutable std::mutex mutex_;
  std::condition_variable turnChanged_;
  uint64_t nextTicket_ = 0;  // a ticket lock: turns are served in the order they were asked for
  uint64_t serving_ = 0;
  bool held_ = false;
  std::set<uint64_t> abandoned_;  // tickets whose job gave up waiting: skipped when served
  uint64_t nextId_ = 0;
  struct Registered {
    DeviceJob job;
    std::map<DeviceJob, bool> seen;  // other jobs seen in progress
  };
  std::map<uint64_t, Registered> jobs_;
};

}  // namespace convscope::ui
