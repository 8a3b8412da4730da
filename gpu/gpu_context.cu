#include "gpu/gpu_context.h"

#include <utility>

#include "gpu/cuda_check.h"

namespace convscope::gpu {

GpuContext::GpuContext() : stream_(CudaStream::create(cudaStreamNonBlocking)) {}

GpuContext::~GpuContext() {
  // Destructors must not throw: errors here are reported by the calls that caused them. The
  // members then go in reverse order, the stream last.
  cudaStreamSynchronize(stream_);
}

void* GpuContext::workspace(size_t bytes) {
  if (bytes <= workspace_.bytes()) return workspace_.get();
  // The old scratch may still be in use by queued work; it goes before the new one is allocated.
  CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  workspace_.free();
  workspace_ = DeviceBuffer(bytes);
  return workspace_.get();
}

std::vector<Device::TracedTime> GpuContext::collectTrace() {
  CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // Taken out first: whatever happens below, the trace is clear and its events are destroyed.
  const std::vector<TraceRecord> records = std::exchange(trace_, {});
  std::vector<Device::TracedTime> times;
  for (const TraceRecord& r : records) {
    float ms = 0.0f;
    CONVSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
    times.push_back({r.name, ms});
  }
  return times;
}

TracedScope::TracedScope(GpuContext& context, const char* name) : context_(context) {
  if (!context.tracing()) return;
  record_.name = name;
  record_.start = CudaEvent::create();
  record_.stop = CudaEvent::create();
  CONVSCOPE_CUDA_CHECK(cudaEventRecord(record_.start, context.stream()));
}

TracedScope::~TracedScope() {
  if (!record_.stop) return;
  cudaEventRecord(record_.stop, context_.stream());
  context_.record(std::move(record_));
}

}  // namespace convscope::gpu
