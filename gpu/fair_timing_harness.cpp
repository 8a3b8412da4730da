// Without CUDA the timer has nothing to run on (the harness: fair_timing_harness.cu).
#include "gpu/fair_timing_harness.h"

#include "app/core/util/error.h"

#ifndef CONVSCOPE_HAVE_CUDA
namespace convscope::gpu {

std::vector<TimedRepetition> timeConvFairly(const ConvVariant&, Device&, const FairTimingPlan&) {
  throw Error("this build has no CUDA: nothing to time a kernel on");
}

GpuClocks gpuPeakClocks() {
  return {};
}

}  // namespace convscope::gpu
#endif
