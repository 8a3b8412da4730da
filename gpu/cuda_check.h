// The one error-checking header for CUDA, cuBLAS and cuDNN calls. A failing call throws
// convscope::gpu::CudaError naming the expression, file and line; nothing calls exit(), so the
// CLI prints the message and the GUI can show it.
//
// CONVSCOPE_CUDNN_CHECK exists only where the build has cuDNN: CMake defines CONVSCOPE_HAVE_CUDNN
// for gpu/ when it finds cudnn.h and the library, and this header then includes cudnn.h itself.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#ifdef CONVSCOPE_HAVE_CUDNN
#include <cudnn.h>
#endif

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

// Any library's status: throws unless it is `success`, with the library's message for it
// (cudaGetErrorString, cublasGetStatusString, cudnnGetErrorString).
template <typename Status>
inline void checkStatus(Status status, Status success, const char* (*message)(Status), const char* expression,
                        const char* file, int line) {
  if (status != success) throwCudaError(message(status), expression, file, line);
}

inline void checkCuda(cudaError_t status, const char* expression, const char* file, int line) {
  checkStatus(status, cudaSuccess, cudaGetErrorString, expression, file, line);
}

}  // namespace convscope::gpu

#define CONVSCOPE_CUDA_CHECK(expression) ::convscope::gpu::checkCuda((expression), #expression, __FILE__, __LINE__)

// After a kernel launch: catches bad launch configurations immediately (the kernel's own faults
// surface at the next synchronising call, which is checked too).
#define CONVSCOPE_CUDA_CHECK_LAUNCH() \
  ::convscope::gpu::checkCuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

#define CONVSCOPE_CUBLAS_CHECK(expression)                                                                  \
  ::convscope::gpu::checkStatus<cublasStatus_t>((expression), CUBLAS_STATUS_SUCCESS, cublasGetStatusString, \
                                                #expression, __FILE__, __LINE__)

#ifdef CONVSCOPE_HAVE_CUDNN
#define CONVSCOPE_CUDNN_CHECK(expression)                                                                            \
  ::convscope::gpu::checkStatus<cudnnStatus_t>((expression), CUDNN_STATUS_SUCCESS, cudnnGetErrorString, #expression, \
                                               __FILE__, __LINE__)
#endif
