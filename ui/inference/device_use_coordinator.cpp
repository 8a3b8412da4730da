#include "ui/inference/device_use_coordinator.h"

namespace convscope::ui {

std::string deviceJobName(DeviceJob job) {
  switch (job) {
    case DeviceJob::LiveInference:
      return "live inference";
    case DeviceJob::Sweep:
      return "sweep";
    case DeviceJob::Profile:
      return "profile";
  }
  return "job";
}

DeviceUseCoordinator& DeviceUseCoordinator::shared() {
  static DeviceUseCoordinator coordinator;
  return coordinator;
}

DeviceUseCoordinator::Lease::Lease(DeviceUseCoordinator& coordinator, DeviceJob job, const std::atomic<bool>* stop)
    : coordinator_(coordinator), job_(job), stop_(stop), id_(coordinator.begin(job)) {
  std::unique_lock lock(coordinator_.mutex_);
  held_ = coordinator_.takeTurn(lock, stop_);
}

DeviceUseCoordinator::Lease::~Lease() {
  coordinator_.end(id_, held_);
}

bool DeviceUseCoordinator::Lease::yieldTurn() {
  std::unique_lock lock(coordinator_.mutex_);
  if (held_) coordinator_.giveTurn();
  held_ = coordinator_.takeTurn(lock, stop_);
  return held_;
}

std::vector<DeviceJob> DeviceUseCoordinator::Lease::othersInProgress() const {
  const std::lock_guard lock(coordinator_.mutex_);
  std::vector<DeviceJob> others;
  for (const auto& [job, seen] : coordinator_.jobs_.at(id_).seen)
    if (seen) others.push_back(job);
  return others;
}

uint64_t DeviceUseCoordinator::begin(DeviceJob job) {
  const std::lock_guard lock(mutex_);
  const uint64_t id = nextId_++;
  jobs_[id] = Registered{job, {}};
  noteOthers();
  return id;
}

void DeviceUseCoordinator::end(uint64_t id, bool held) {
  const std::lock_guard lock(mutex_);
  if (held) giveTurn();
  jobs_.erase(id);
}

bool DeviceUseCoordinator::takeTurn(std::unique_lock<std::mutex>& lock, const std::atomic<bool>* stop) {
  const uint64_t ticket = nextTicket_++;
  const auto myTurn = [&] { return serving_ == ticket && !held_; };
  turnChanged_.wait(lock, [&] { return myTurn() || (stop && stop->load()); });
  if (myTurn()) {
    held_ = true;
    return true;
  }
  // Given up while another job holds the device (serving_ < ticket): the ticket is skipped when
  // the turns reach it.
  abandoned_.insert(ticket);
  return false;
}

void DeviceUseCoordinator::giveTurn() {
  held_ = false;
  ++serving_;
  while (abandoned_.erase(serving_) > 0) ++serving_;
  turnChanged_.notify_all();
}

void DeviceUseCoordinator::wakeWaiters() {
  { const std::lock_guard lock(mutex_); }  // a waiter between its check of `stop` and its sleep sees this wake-up
  turnChanged_.notify_all();
}

void DeviceUseCoordinator::noteOthers() {
  for (auto& [id, registered] : jobs_)
    for (const auto& [otherId, other] : jobs_)
      if (otherId != id) registered.seen[other.job] = true;
}

std::vector<DeviceJob> DeviceUseCoordinator::jobsInProgress() const {
  const std::lock_guard lock(mutex_);
  std::vector<DeviceJob> jobs;
  for (const auto& [id, registered] : jobs_) jobs.push_back(registered.job);
  return jobs;
}

bool DeviceUseCoordinator::deviceBusy() const {
  const std::lock_guard lock(mutex_);
  return held_;
}

}  // namespace convscope::ui
