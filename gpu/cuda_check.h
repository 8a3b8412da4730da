// The one error-checking header for CUDA, cuBLAS and cuDNN calls. A failing call throws
// convscope::gpu::CudaError naming the expression, file and line; nothing calls exit(), so the
// CLI prints the message and the GUI can show it.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "app/core/util/error.h"

namespace convscope::gpu {

class CudaError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] inline void throwCudaError(const std::string& what, const char* expression, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expression + " failed: " + what);
}

inline void checkCuda(cudaError_t status, const char* expression, const char* file, int line) {
  if (status != cudaSuccess) throwCudaError(cudaGetErrorString(status), expression, file, line);
}

}  // namespace convscope::gpu

#define CONVSCOPE_CUDA_CHECK(expression) ::convscope::gpu::checkCuda((expression), #expression, __FILE__, __LINE__)

// After a kernel launch: catches bad launch configurations immediately (the kernel's own faults
// surface at the next synchronising call, which is checked too).
#define CONVSCOPE_CUDA_CHECK_LAUNCH() \
  ::convscope::gpu::checkCuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
