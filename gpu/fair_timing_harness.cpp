// Without CUDA the timer has nothing to run on (the harness: fair_timing_harness.cu); with it or
// without, it is the core's fair timer in every program that links gpu/.
#include "gpu/fair_timing_harness.h"

#include "app/core/util/error.h"

#ifndef CONVSCOPE_HAVE_CUDA
namespace convscope::gpu {

std::vector<TimedRepetition> timeConvFairly(const ConvVariant&, Device&, const FairTimingPlan&) {
  throw Error("this build has no CUDA: nothing to time a kernel on");
}

}  // namespace convscope::gpu
#endif

namespace convscope::gpu {
namespace {
const bool installed = [] {
  installFairTimer(timeConvFairly);
  return true;
}();
}  // namespace
}  // namespace convscope::gpu
