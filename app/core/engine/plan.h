// What the engine will run for a model and a selected variant: an ordered list of stages, each one
// op or a fused group (a Conv with the activation and pooling that follow it, when the variant
// applies them in its own kernel), each claimed by a variant or a device. Where the selected
// variant declines a layer, or an op has no GPU kernel, the stage says what runs instead and why:
// a fallback is part of the plan, shown by `convscope-cli info --variant` and the Model tab, never
// a silent branch inside a launcher.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/core/model/model.h"

namespace convscope {

struct ChainNetwork;

struct PlanStage {
  std::vector<size_t> nodes;   // indices into Model::nodes; several: a fused group led by its Conv
  bool hasConv = false;        // the first node is a Conv
  std::string variant;         // hasConv: the variant that runs it
  std::string fallbackReason;  // set when the selected variant declined this conv
  bool onGpu = false;          // where this stage runs
  // On a GPU plan, an op without a GPU kernel, or a conv that no GPU variant computes (run by a
  // CPU variant): its inputs go to the host and its output comes back.
  bool hostRoundTrip = false;
  // Every node of the model in one kernel of a whole-network variant (step 13): the chain the
  // planner read off the graph, so the evaluator need not read it again.
  bool wholeNetwork = false;
  std::shared_ptr<const ChainNetwork> network;
  // The values this stage's nodes read for the last time (lastReaders()), in the order they read
  // them: the evaluator frees them after the stage. Set by makePlan, so that a run of a kept plan
  // does not walk the graph again.
  std::vector<std::string> lastReadHere;

  bool fused() const { return nodes.size() > 1; }
};

struct Plan {
  std::string selectedVariant;
  bool onGpu = false;
  std::vector<PlanStage> stages;
  // A whole-network variant that runs this model layer by layer says why (a capturing plan, a
  // graph that is not a chain of conv and fully connected layers, a network too large).
  std::string wholeNetworkDeclined;

  // One line per stage: "3  conv2 (Conv) + relu2 (Relu)   gpu-x (fused)", fallbacks with their reason.
  std::vector<std::string> describe(const Model& model) const;
  int fallbackCount() const;
};

// `fuse`: false keeps every node its own stage (the feature-map view needs every layer's output).
// Throws convscope::Error naming the node when a shape is inconsistent.
Plan makePlan(const Model& model, const std::string& variantId, const std::map<std::string, Shape>& inputShapes,
              bool fuse = true);

// For every value the graph reads, the index of the last node that reads it (Model::nodes.size()
// for a graph output, which is never freed): the evaluator frees an intermediate there, and the
// memory estimate counts it free from there.
std::map<std::string, size_t> lastReaders(const Model& model);

}  // namespace convscope
