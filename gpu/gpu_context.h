// The GPU state one engine owns: its stream, a growable scratch workspace, per-variant state
// (cuDNN handles, algorithm caches) and the optional kernel trace behind `convscope-cli profile`.
// Not thread-safe: one engine, one thread.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/core/device/device.h"
#include "gpu/cuda_resources.h"

namespace convscope::gpu {

// One kernel launch or copy as the trace saw it.
struct TraceRecord {
  std::string name;
  CudaEvent start;
  CudaEvent stop;
};

class GpuContext {
 public:
  GpuContext();
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Device scratch memory of at least `bytes`, valid until the next call; grows, never shrinks.
  void* workspace(size_t bytes);

  // Per-variant state, created on first use (e.g. the cuDNN variant's handle and algorithm cache).
  template <typename T>
  T& state(const std::string& key) {
    auto& slot = state_[key];
    if (!slot) slot = std::make_shared<T>();
    return *static_cast<T*>(slot.get());
  }

  // Tracing: while on, every TracedScope records events around its work.
  void setTracing(bool on) { tracing_ = on; }
  bool tracing() const { return tracing_; }
  void record(TraceRecord record) { trace_.push_back(std::move(record)); }
  // Synchronises, returns the elapsed time of every record, and clears the trace.
  std::vector<Device::TracedTime> collectTrace();

 private:
  // Destroyed bottom-up: the trace's events, the variant state, the workspace, then the stream.
  CudaStream stream_;
  DeviceBuffer workspace_;
  std::map<std::string, std::shared_ptr<void>> state_;
  bool tracing_ = false;
  std::vector<TraceRecord> trace_;
};

// Wrap each kernel launch or copy: `TracedScope scope(context, "conv_baseline");`. Costs
// nothing when tracing is off.
class TracedScope {
 public:
  TracedScope(GpuContext& context, const char* name);
  ~TracedScope();
  TracedScope(const TracedScope&) = delete;
  TracedScope& operator=(const TracedScope&) = delete;

 private:
  GpuContext& context_;
  TraceRecord record_;  // empty (no events) while tracing is off
};

}  // namespace convscope::gpu
