#include "app/core/engine/plan.h"

#include <sstream>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/chain_network.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

Plan withLastReads(const Model& model, Plan plan) {
  const std::map<std::string, size_t> lastUse = lastReaders(model);
  for (PlanStage& stage : plan.stages)
    for (const size_t index : stage.nodes)
      for (const std::string& name : model.nodes[index].inputs)
        if (lastUse.at(name) == index) stage.lastReadHere.push_back(name);
  return plan;
}

std::string nodeLabel(const Node& node) {
  return node.name + " (" + node.opType + ")";
}

// How many nodes read each value; the graph's outputs count as a reader.
std::map<std::string, int> readers(const Model& model) {
  std::map<std::string, int> count;
  for (const Node& node : model.nodes)
    for (const std::string& name : node.inputs) ++count[name];
  for (const ValueInfo& output : model.outputs) ++count[output.name];
  return count;
}

}  // namespace

Plan makePlan(const Model& model, const std::string& variantId, const std::map<std::string, Shape>& inputShapes,
              bool fuse) {
  const ConvVariant& selected = findConvVariant(variantId);
  Plan plan;
  plan.selectedVariant = selected.id;
  plan.onGpu = selected.runsOnGpu();
  const std::map<std::string, Shape> shapes = model.inferShapes(inputShapes);
  const std::map<std::string, int> readCount = readers(model);
  const auto shapesOf = [&](const Node& node) {
    std::vector<Shape> in;
    for (const std::string& name : node.inputs) in.push_back(shapes.at(name));
    return in;
  };

  // A whole-network variant takes every node in one stage, or says why it cannot.
  if (selected.runNetwork) {
    std::optional<ChainNetwork> network;
    if (!fuse)
      plan.wholeNetworkDeclined = "every layer's output is kept (the feature maps), so the layers run one by one";
    else if (!(network = matchChainNetwork(model, &plan.wholeNetworkDeclined)))
      ;  // the reason is set
    else if (selected.declinesNetwork)
      plan.wholeNetworkDeclined = selected.declinesNetwork(*network);
    if (network && plan.wholeNetworkDeclined.empty()) {
      PlanStage stage;
      stage.nodes = network->nodes;
      stage.hasConv = true;
      stage.wholeNetwork = true;
      stage.network = std::make_shared<const ChainNetwork>(std::move(*network));
      stage.variant = selected.id;
      stage.onGpu = plan.onGpu;
      plan.stages.push_back(std::move(stage));
      return withLastReads(model, std::move(plan));
    }
  }

  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const Node& node = model.nodes[i];
    PlanStage stage;
    stage.nodes = {i};
    stage.onGpu = plan.onGpu;
    std::optional<ConvProblem> problem;
    try {
      problem = node.op->convProblem(shapesOf(node));
    } catch (const Error& e) {
      throw Error(model.sourcePath + ": node '" + node.name + "' (" + node.opType + "): " + e.what());
    }
    if (!problem) {
      stage.hostRoundTrip = plan.onGpu && !node.op->hasDeviceKernel();
      plan.stages.push_back(std::move(stage));
      continue;
    }
    stage.hasConv = true;
    const ConvVariant* runner = &selected;
    stage.fallbackReason = selected.unsupportedReasonFor(*problem);
    if (!plan.wholeNetworkDeclined.empty())
      stage.fallbackReason += ", and not this network: " + plan.wholeNetworkDeclined;
    if (!stage.fallbackReason.empty()) runner = &fallbackConvVariant(selected, *problem);
    stage.variant = runner->id;
    if (plan.onGpu && !runner->runsOnGpu()) {
      stage.onGpu = false;
      stage.hostRoundTrip = true;
    }
    // The activation, then the pooling, that directly follow and read only this chain's output.
    bool activationTaken = false;
    // A conv run on the host for a GPU plan stays alone: its neighbours' values live on the GPU.
    while (fuse && !stage.hostRoundTrip && i + 1 < model.nodes.size()) {
      const Node& previous = model.nodes[i];
      const Node& next = model.nodes[i + 1];
      if (next.inputs.size() != 1 || next.inputs[0] != previous.output || readCount.at(previous.output) != 1) break;
      if (!runner->canFuse(next.opType)) break;
      const std::optional<EpilogueStep> step = next.op->asEpilogueStep(shapes.at(previous.output));
      if (!step || (!step->isPool && activationTaken)) break;
      if (runner->fusesStep && !runner->fusesStep(*problem, *step)) break;
      activationTaken = activationTaken || !step->isPool;
      stage.nodes.push_back(++i);
      if (step->isPool) break;  // the pooling ends the epilogue
    }
    plan.stages.push_back(std::move(stage));
  }
  return withLastReads(model, std::move(plan));
}

int Plan::fallbackCount() const {
  int count = 0;
  for (const PlanStage& stage : stages) count += !stage.fallbackReason.empty() || stage.hostRoundTrip ? 1 : 0;
  return count;
}

std::vector<std::string> Plan::describe(const Model& model) const {
  std::vector<std::string> lines;
  int number = 0;
  for (const PlanStage& stage : stages) {
    std::ostringstream line;
    line << ++number << ". ";
    if (stage.wholeNetwork)
      line << nodeLabel(model.nodes[stage.nodes.front()]) << " ... " << nodeLabel(model.nodes[stage.nodes.back()])
           << " (" << stage.nodes.size() << " nodes)";
    else
      for (size_t k = 0; k < stage.nodes.size(); ++k)
        line << (k ? " + " : "") << nodeLabel(model.nodes[stage.nodes[k]]);
    line << ": ";
    if (stage.wholeNetwork) {
      line << stage.variant << ", the whole network in one kernel";
    } else if (stage.hasConv) {
      line << stage.variant;
      if (stage.fused()) line << ", fused in one kernel";
      if (!stage.fallbackReason.empty())
        line << " -- fallback: " << selectedVariant << " declined this layer (" << stage.fallbackReason << ")";
      if (stage.hostRoundTrip) line << "; on the CPU, its inputs copied to the host and its output back";
    } else if (stage.hostRoundTrip) {
      line << "CPU -- fallback: no GPU kernel for " << model.nodes[stage.nodes[0]].opType
           << "; its inputs are copied to the host and its output back";
    } else {
      line << (stage.onGpu ? "GPU" : "CPU");
    }
    lines.push_back(line.str());
  }
  return lines;
}

std::map<std::string, size_t> lastReaders(const Model& model) {
  std::map<std::string, size_t> lastUse;
  for (size_t i = 0; i < model.nodes.size(); ++i)
    for (const std::string& name : model.nodes[i].inputs) lastUse[name] = i;
  for (const ValueInfo& output : model.outputs) lastUse[output.name] = model.nodes.size();
  return lastUse;
}

}  // namespace convscope
