// The tensor-core path that CONVSCOPE_TENSOR_MMA asks for, checked against the kernels that ran
// (gpu/tensor_core_paths.h counts every launch of the tensor-core variants by path). The path
// tests of tests/CMakeLists.txt (*.OnTheWgmmaPath, *.OnTheSyncPath, *.OnTheSharedOperandPath) run
// the tensor-core variants with the variable set; without this check they would pass on whatever
// path ran. What each value must launch is worked out here from the variable, the GPU and the
// build, not from the launchers' own choice:
//   sync       mma.sync only;
//   wgmma      wgmma with A from registers only, on compute capability 9.0 in a build with sm_90a
//              code (the only machine code with wgmma, which no other GPU runs); elsewhere wgmma
//              cannot run, mma.sync runs instead, and the test says so in its output;
//   wgmma-ss   no register-A wgmma; on 9.0 with sm_90a code the TF32 variant's stride-1 layers
//              take the shared-operand wgmma (at least one launch), elsewhere none does;
//   unset      no register-A wgmma; the shared-operand wgmma only on 9.0 with sm_90a code.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/core/device/gpu_platform.h"
#include "gpu/tensor_core_paths.h"

namespace convscope::testing {

inline bool isTensorCoreVariant(const std::string& variantId) {
  return variantId == "gpu-tensor-tf32" || variantId == "gpu-tensor-3xtf32";
}

// Checks the launches made since `before` by a test of `variantId` (nothing for another variant).
// `strideOneLayerRan`: the test ran a stride-1 layer, which CONVSCOPE_TENSOR_MMA=wgmma-ss gives to
// the shared-operand wgmma on a GPU that has it.
inline void expectTheAskedTensorCorePathRan(const std::string& variantId, const gpu::TensorCoreLaunches& before,
                                            bool strideOneLayerRan) {
  if (!isTensorCoreVariant(variantId)) return;
  const gpu::TensorCoreLaunches ran = gpu::tensorCoreLaunches().since(before);
  const char* value = std::getenv("CONVSCOPE_TENSOR_MMA");
  const std::string asked = value ? value : "";
  const GpuInfo& gpu = gpuInfo();
  const bool hopper = gpu.usable && gpu.computeMajor == 9 && gpu.computeMinor == 0;
  const bool wgmmaHere = hopper && gpu::builtWithWgmmaCode();
  const std::string here = "compute capability " + std::to_string(gpu.computeMajor) + "." +
                           std::to_string(gpu.computeMinor) +
                           (gpu::builtWithWgmmaCode() ? ", a build with sm_90a code" : ", a build without sm_90a code");
  const std::string counts = "launches: " + std::to_string(ran.mmaSync) + " mma.sync, " +
                             std::to_string(ran.wgmmaRegisterA) + " wgmma (A from registers), " +
                             std::to_string(ran.wgmmaSharedOperands) + " wgmma (shared operands)";
  std::printf("CONVSCOPE_TENSOR_MMA=%s on %s: %s\n", asked.empty() ? "(unset)" : asked.c_str(), here.c_str(),
              counts.c_str());
  ::testing::Test::RecordProperty("tensor_core_launches", counts);
  ASSERT_GT(ran.total(), 0) << "no tensor-core kernel ran";
  if (asked == "sync") {
    EXPECT_EQ(ran.mmaSync, ran.total()) << "CONVSCOPE_TENSOR_MMA=sync: every launch on mma.sync; " << counts;
  } else if (asked == "wgmma") {
    if (wgmmaHere) {
      EXPECT_EQ(ran.wgmmaRegisterA, ran.total())
          << "CONVSCOPE_TENSOR_MMA=wgmma on " << here << ": every launch on wgmma; " << counts;
    } else {
      // Not a failure: this GPU or build has no wgmma. But not a silent pass either.
      std::printf("the wgmma path cannot run on %s: mma.sync ran instead\n", here.c_str());
      ::testing::Test::RecordProperty("tensor_core_path", "wgmma asked for, mma.sync ran: no wgmma on " + here);
      EXPECT_EQ(ran.mmaSync, ran.total()) << counts;
    }
  } else {
    EXPECT_EQ(ran.wgmmaRegisterA, 0) << "register-A wgmma is taken only with CONVSCOPE_TENSOR_MMA=wgmma; " << counts;
    if (!wgmmaHere || variantId != "gpu-tensor-tf32") {
      EXPECT_EQ(ran.wgmmaSharedOperands, 0)
          << "no shared-operand wgmma for " << variantId << " on " << here << "; " << counts;
    } else if (asked == "wgmma-ss" && strideOneLayerRan) {
      EXPECT_GT(ran.wgmmaSharedOperands, 0) << "CONVSCOPE_TENSOR_MMA=wgmma-ss on " << here
                                            << ": no stride-1 layer took the shared-operand wgmma; " << counts;
    }
  }
}

}  // namespace convscope::testing
