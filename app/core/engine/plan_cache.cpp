#include "app/core/engine/plan_cache.h"

namespace convscope {

const Plan& PlanCache::planFor(const std::map<std::string, Shape>& inputShapes, bool fuse) {
  if (!last_ || last_->inputShapes != inputShapes || last_->fuse != fuse) {
    // Planned before the old plan is dropped: a plan that throws leaves the cache as it was.
    Plan plan = makePlan(model_, variantId_, inputShapes, fuse);
    last_ = PlannedShapes{inputShapes, fuse, std::move(plan)};
    ++plansMade_;
  }
  return last_->plan;
}

}  // namespace convscope
