// What running a batch takes, estimated from the shapes and the plan alone, before anything is
// allocated. The estimate walks the plan's stages as the evaluator does (evaluation.h): a fused
// stage stores only its last node's output, and every intermediate is freed after its last reader.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "app/core/conv/conv_problem.h"
#include "app/core/engine/plan.h"
#include "app/core/model/model.h"

namespace convscope {

struct MemoryEstimate {
  int64_t bytes = 0;  // at the peak: the input, live activations, the conv workspace
  std::string node;   // the layer where the peak is reached
  std::string opType;
  int64_t workspaceBytes = 0;  // of `bytes`, the conv backend's scratch memory (im2col)
};

// The scratch bytes the CPU variant `variantId` needs for `problem` (ConvBackend::workspaceBytes).
using HostWorkspace = std::function<int64_t(const std::string& variantId, const ConvProblem& problem)>;

// The peak of a run of `plan` on inputs of `inputShapes`, or -- when the need at a stage passes
// `limit` -- that stage's need (where a run would fail). `captureLayers`: the run keeps a copy of
// the input and of every stage's output. Sizes saturate at INT64_MAX instead of overflowing; a
// shape that cannot be inferred throws convscope::Error naming the node.
MemoryEstimate estimatePeakMemory(const Model& model, const Plan& plan, const std::map<std::string, Shape>& inputShapes,
                                  bool captureLayers, const HostWorkspace& hostWorkspace, int64_t limit = INT64_MAX);

// The largest batch in [1, 2^30] for which `fits` holds, by doubling and then bisecting (`fits`
// must hold for every batch below one where it holds); 0 when not even 1 fits.
int64_t largestBatchWhere(const std::function<bool(int64_t batch)>& fits);

}  // namespace convscope
