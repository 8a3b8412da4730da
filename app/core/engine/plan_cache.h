// The plan of the last input shapes an engine was asked about. The memory check and the run of one
// inference ask for the same shapes, one after the other, so the second asks for nothing new:
// one plan is kept, and a call with other shapes (or the other fusion) replaces it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "app/core/engine/plan.h"
#include "app/core/model/model.h"

namespace convscope {

class PlanCache {
 public:
  // `model` must outlive the cache.
  PlanCache(const Model& model, std::string variantId) : model_(model), variantId_(std::move(variantId)) {}

  // makePlan(model, variantId, inputShapes, fuse), made only when the last call asked for other
  // shapes or the other fusion. The reference is valid until the next call with other ones.
  const Plan& planFor(const std::map<std::string, Shape>& inputShapes, bool fuse);

  // How many plans this cache has made (a hit makes none).
  int64_t plansMade() const { return plansMade_; }

 private:
  struct PlannedShapes {
    std::map<std::string, Shape> inputShapes;
    bool fuse = true;
    Plan plan;
  };
  const Model& model_;
  std::string variantId_;
  std::optional<PlannedShapes> last_;
  int64_t plansMade_ = 0;
};

}  // namespace convscope
