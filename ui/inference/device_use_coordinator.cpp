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

DeviceUseCoordinator::Lease::Lease(DeviceUseCoordinator& coordinator, DeviceJob job)
    : coordinator_(coordinator), job_(job), id_(coordinator.begin(job)) {}

DeviceUseCoordinator::Lease::~Lease() {
  coordinator_.end(id_);
}

void DeviceUseCoordinator::Lease::yieldTurn() {
  std::unique_lock lock(coordinator_.mutex_);
  coordinator_.giveTurn();
  coordinator_.takeTurn(lock);
}

std::vector<DeviceJob> DeviceUseCoordinator::Lease::othersInProgress() const {
  const std::lock_guard lock(coordinator_.mutex_);
  std::vector<DeviceJob> others;
  for (const auto& [job, seen] : coordinator_.jobs_.at(id_).seen)
    if (seen) others.push_back(job);
  return others;
}

uint64_t DeviceUseCoordinator::begin(DeviceJob job) {
  std::unique_lock lock(mutex_);
  const uint64_t id = nextId_++;
  jobs_[id] = Registered{job, {}};
  noteOthers();
  takeTurn(lock);
  return id;
}

void DeviceUseCoordinator::end(uint64_t id) {
  const std::lock_guard lock(mutex_);
  giveTurn();
  jobs_.erase(id);
}

void DeviceUseCoordinator::takeTurn(std::unique_lock<std::mutex>& lock) {
  const uint64_t ticket = nextTicket_++;
  turnChanged_.wait(lock, [&] { return serving_ == ticket && !held_; });
  held_ = true;
}

void DeviceUseCoordinator::giveTurn() {
  held_ = false;
  ++serving_;
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
