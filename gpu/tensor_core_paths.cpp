#include "gpu/tensor_core_paths.h"

#include <atomic>

namespace convscope::gpu {

namespace {

std::atomic<int64_t> launches[3];  // by TensorCorePath; zero before main (static storage)

}  // namespace

const char* tensorCorePathName(TensorCorePath path) {
  switch (path) {
    case TensorCorePath::kMmaSync:
      return "mma.sync";
    case TensorCorePath::kWgmmaRegisterA:
      return "wgmma (A from registers)";
    case TensorCorePath::kWgmmaSharedOperands:
      return "wgmma (both operands from shared memory)";
  }
  return "?";
}

void countTensorCoreLaunch(TensorCorePath path) {
  launches[static_cast<int>(path)].fetch_add(1, std::memory_order_relaxed);
}

TensorCoreLaunches tensorCoreLaunches() {
  return {launches[0].load(std::memory_order_relaxed), launches[1].load(std::memory_order_relaxed),
          launches[2].load(std::memory_order_relaxed)};
}

bool builtWithWgmmaCode() {
#if defined(CONVSCOPE_HAVE_SM90A)  // gpu/CMakeLists.txt: CMAKE_CUDA_ARCHITECTURES names 90a
  return true;
#else
  return false;
#endif
}

}  // namespace convscope::gpu
