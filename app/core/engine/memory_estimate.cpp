#include "app/core/engine/memory_estimate.h"

#include <algorithm>
#include <set>
#include <vector>

#include "app/core/util/checked_math.h"

namespace convscope {
namespace {

int64_t bytesOf(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count = saturatingMul(count, std::max<int64_t>(d, 0));
  return saturatingMul(count, sizeof(float));
}

}  // namespace

MemoryEstimate estimatePeakMemory(const Model& model, const Plan& plan, const std::map<std::string, Shape>& inputShapes,
                                  bool captureLayers, const HostWorkspace& hostWorkspace, int64_t limit) {
  const std::map<std::string, Shape> shapes = model.inferShapes(inputShapes);
  int64_t live = 0;
  for (const auto& [name, shape] : inputShapes) live = saturatingAdd(live, bytesOf(shape));
  if (captureLayers) live = saturatingMul(live, 2);  // infer() keeps a copy of the input
  const std::map<std::string, size_t> lastUse = lastReaders(model);
  std::set<std::string> produced;
  MemoryEstimate peak;
  for (const PlanStage& stage : plan.stages) {
    const Node& first = model.nodes[stage.nodes.front()];
    const Node& last = model.nodes[stage.nodes.back()];
    const int64_t out = bytesOf(shapes.at(last.output));
    int64_t workspace = 0;
    if (stage.hasConv && !stage.onGpu) {
      std::vector<Shape> in;
      for (const std::string& name : first.inputs) in.push_back(shapes.at(name));
      workspace = hostWorkspace(stage.variant, *first.op->convProblem(in));
    }
    // While the stage runs: what is alive, its output, its workspace, and a captured copy.
    const int64_t kept = captureLayers ? saturatingMul(out, 2) : out;
    const int64_t now = saturatingAdd(saturatingAdd(live, kept), workspace);
    if (now > peak.bytes) peak = {now, first.name, first.opType, workspace};
    if (now > limit) return peak;  // the layer where a run would fail
    live = saturatingAdd(live, kept);
    produced.insert(last.output);
    for (const size_t index : stage.nodes)
      for (const std::string& name : model.nodes[index].inputs)
        if (lastUse.at(name) == index && produced.erase(name)) live -= bytesOf(shapes.at(name));
  }
  // The outputs are copied out of the engine at the end.
  int64_t atEnd = live;
  for (const ValueInfo& output : model.outputs) atEnd = saturatingAdd(atEnd, bytesOf(shapes.at(output.name)));
  if (atEnd > peak.bytes && !model.nodes.empty()) peak = {atEnd, model.nodes.back().name, model.nodes.back().opType, 0};
  return peak;
}

int64_t largestBatchWhere(const std::function<bool(int64_t batch)>& fits) {
  if (!fits(1)) return 0;
  // The need grows with the batch: double until it no longer fits, then bisect.
  constexpr int64_t kLargest = int64_t{1} << 30;
  int64_t good = 1;
  while (good < kLargest && fits(std::min(good * 2, kLargest))) good = std::min(good * 2, kLargest);
  int64_t bad = std::min(good * 2, kLargest + 1);
  while (bad - good > 1) {
    const int64_t middle = good + (bad - good) / 2;
    (fits(middle) ? good : bad) = middle;
  }
  return good;
}

}  // namespace convscope
