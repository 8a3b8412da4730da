// Which path each launch of the tensor-core variants took (11_tensor_tf32.cu, 12_tensor_3xtf32.cu):
// mma.sync, wgmma with A from registers, or wgmma with both operands from shared memory. The GPU,
// the build's machine code and CONVSCOPE_TENSOR_MMA choose it (implicit_gemm_mma.cuh,
// wgmma_shared_operands.cuh); the launchers count every launch here, for the whole process, so
// that a test that asks for a path checks that its kernel ran rather than trusting the variable
// (tests/CMakeLists.txt: *.OnTheWgmmaPath, *.OnTheSyncPath, *.OnTheSharedOperandPath). The device's
// trace names the same kernels. Plain C++: a build without CUDA counts nothing.
#pragma once

#include <cstdint>

namespace convscope::gpu {

enum class TensorCorePath : int { kMmaSync = 0, kWgmmaRegisterA = 1, kWgmmaSharedOperands = 2 };

// "mma.sync", "wgmma (A from registers)", "wgmma (both operands from shared memory)".
const char* tensorCorePathName(TensorCorePath path);

// Launches per path since the process started (host-side launches: a recorded CUDA graph's
// replays launch nothing here).
struct TensorCoreLaunches {
  int64_t mmaSync = 0, wgmmaRegisterA = 0, wgmmaSharedOperands = 0;

  int64_t total() const { return mmaSync + wgmmaRegisterA + wgmmaSharedOperands; }
  TensorCoreLaunches since(const TensorCoreLaunches& earlier) const {
    return {mmaSync - earlier.mmaSync, wgmmaRegisterA - earlier.wgmmaRegisterA,
            wgmmaSharedOperands - earlier.wgmmaSharedOperands};
  }
};

// Called by the launchers after each launch. Thread-safe.
void countTensorCoreLaunch(TensorCorePath path);
TensorCoreLaunches tensorCoreLaunches();

// Whether this build holds sm_90a machine code, the only code with wgmma (compute capability 9.0
// runs it, no other GPU): without it no launch takes a wgmma path.
bool builtWithWgmmaCode();

}  // namespace convscope::gpu
