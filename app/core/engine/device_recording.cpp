#include "app/core/engine/device_recording.h"

#include <optional>

#include "app/core/util/error.h"

namespace convscope {

DeviceRecording::DeviceRecording(Device& device) : device_(device) {
  device_.beginRecording();
}

DeviceRecording::~DeviceRecording() {
  if (open_) device_.cancelRecording();
}

std::unique_ptr<RecordedWork> DeviceRecording::finish() {
  std::unique_ptr<RecordedWork> work = device_.endRecording();
  open_ = false;
  return work;
}

RecordingOutcome recordWork(Device& device, const std::function<void()>& enqueue) {
  std::optional<DeviceRecording> recording;
  try {
    recording.emplace(device);
  } catch (const Error& e) {
    return {nullptr, std::string("beginning the recording failed: ") + e.what()};
  }
  try {
    enqueue();
  } catch (const Error& e) {
    return {nullptr, std::string("recording the work failed: ") + e.what()};  // `recording` cancels
  }
  try {
    return {recording->finish(), ""};
  } catch (const Error& e) {
    return {nullptr, std::string("ending the recording failed: ") + e.what()};
  }
}

}  // namespace convscope
