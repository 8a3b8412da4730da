#include "gpu/cuda_check.h"
#include "gpu/gpu_context.h"

namespace convscope::gpu {

GpuContext::GpuContext() {
  CONVSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

GpuContext::~GpuContext() {
  // Destructors must not throw: errors here are reported by the calls that caused them.
  cudaStreamSynchronize(stream_);
  for (TraceRecord& r : trace_) {
    cudaEventDestroy(r.start);
    cudaEventDestroy(r.stop);
  }
  state_.clear();  // variant state (cuDNN handles) before the stream goes
  if (workspace_) cudaFree(workspace_);
  cudaStreamDestroy(stream_);
}

void* GpuContext::workspace(size_t bytes) {
  if (bytes <= workspaceBytes_) return workspace_;
  // The old scratch may still be in use by queued work.
  CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (workspace_) CONVSCOPE_CUDA_CHECK(cudaFree(workspace_));
  workspace_ = nullptr;
  workspaceBytes_ = 0;
  CONVSCOPE_CUDA_CHECK(cudaMalloc(&workspace_, bytes));
  workspaceBytes_ = bytes;
  return workspace_;
}

std::vector<TracedTime> GpuContext::collectTrace() {
  CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<TracedTime> times;
  for (TraceRecord& r : trace_) {
    float ms = 0.0f;
    CONVSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
    times.push_back({r.name, ms});
    cudaEventDestroy(r.start);
    cudaEventDestroy(r.stop);
  }
  trace_.clear();
  return times;
}

TracedScope::TracedScope(GpuContext& context, const char* name) : context_(context) {
  if (!context.tracing()) return;
  record_.name = name;
  CONVSCOPE_CUDA_CHECK(cudaEventCreate(&record_.start));
  CONVSCOPE_CUDA_CHECK(cudaEventCreate(&record_.stop));
  CONVSCOPE_CUDA_CHECK(cudaEventRecord(record_.start, context.stream()));
  active_ = true;
}

TracedScope::~TracedScope() {
  if (!active_) return;
  cudaEventRecord(record_.stop, context_.stream());
  context_.record(record_);
}

}  // namespace convscope::gpu
