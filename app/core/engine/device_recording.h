// Recording work on a Device (a CUDA graph on the GPU) as an owner: a recording that is begun is
// either ended or cancelled, whatever throws in between. recordWork() says, when a recording
// fails, which step failed and the device's reason, so that Engine::recordingDeclined() can tell
// a user precisely why a batch is not replayed.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "app/core/device/device.h"

namespace convscope {

// Begins a recording when made; cancels it when it goes without finish() having succeeded.
class DeviceRecording {
 public:
  explicit DeviceRecording(Device& device);  // throws what Device::beginRecording throws
  ~DeviceRecording();
  DeviceRecording(const DeviceRecording&) = delete;
  DeviceRecording& operator=(const DeviceRecording&) = delete;

  // Ends the recording and returns the work; if ending throws, the destructor still cancels.
  std::unique_ptr<RecordedWork> finish();

 private:
  Device& device_;
  bool open_ = true;
};

struct RecordingOutcome {
  std::unique_ptr<RecordedWork> work;  // null when the recording failed
  std::string failure;                 // then: the step and the device's reason
};

// Records what `enqueue` queues on `device`. A convscope::Error from a step (beginning the
// recording, the work, ending it) becomes the outcome's failure, named by its step; any other
// exception is a bug and propagates, the recording cancelled.
RecordingOutcome recordWork(Device& device, const std::function<void()>& enqueue);

}  // namespace convscope
