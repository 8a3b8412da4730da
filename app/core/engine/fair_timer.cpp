#include "app/core/engine/fair_timer.h"

#include <utility>

#include "app/core/util/error.h"

namespace convscope {
namespace {

FairTimer& installedTimer() {
  static FairTimer timer;
  return timer;
}

}  // namespace

void installFairTimer(FairTimer timer) {
  installedTimer() = std::move(timer);
}

std::vector<TimedRepetition> timeConvFairly(const ConvVariant& row, Device& device, const FairTimingPlan& plan) {
  const FairTimer& timer = installedTimer();
  if (!timer) throw Error("this program has no GPU code: nothing to time " + row.id + " on");
  return timer(row, device, plan);
}

}  // namespace convscope
