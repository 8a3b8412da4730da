#include "app/core/engine/chain_network.h"

#include "app/core/util/error.h"

namespace convscope {
namespace {

// Walks the nodes in order; each must read the value the one before it wrote (plus weights).
class ChainReader {
 public:
  ChainReader(const Model& model, const std::map<std::string, Shape>& shapes, std::string current)
      : model_(model), shapes_(shapes), current_(std::move(current)) {}

  bool done() const { return next_ == model_.nodes.size(); }
  const Node& peek() const { return model_.nodes[next_]; }
  size_t index() const { return next_; }

  // The next node's input shapes, or an error when it does not continue the chain.
  std::vector<Shape> inputsOfNext() const {
    const Node& node = peek();
    if (node.inputs.empty() || node.inputs.front() != current_)
      throw Error(describe(node) + " does not read the output of the node before it: the graph branches");
    std::vector<Shape> in;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (i > 0 && !model_.weights.count(node.inputs[i]))
        throw Error(describe(node) + " reads '" + node.inputs[i] + "', which is not a weight: the graph branches");
      in.push_back(shapes_.at(node.inputs[i]));
    }
    return in;
  }

  const Node& take(int64_t* flops) {
    const Node& node = peek();
    const std::vector<Shape> in = inputsOfNext();
    *flops += node.op->flops(in, shapes_.at(node.output));
    current_ = node.output;
    ++next_;
    return node;
  }

  const Shape& currentShape() const { return shapes_.at(current_); }
  const std::string& current() const { return current_; }

  static std::string describe(const Node& node) { return "node '" + node.name + "' (" + node.opType + ")"; }

 private:
  const Model& model_;
  const std::map<std::string, Shape>& shapes_;
  std::string current_;
  size_t next_ = 0;
};

// The activation a node applies, if it is one (a fusable one: util/activations.h).
std::optional<Activation> activationOf(const Node& node, const Shape& input) {
  const std::optional<EpilogueStep> step = node.op->asEpilogueStep(input);
  if (!step || step->isPool) return std::nullopt;
  return step->activation;
}

LayerRole roleOf(const Node& node) {
  return node.op->description().role;
}

void skipIdentities(ChainReader& chain, int64_t* flops) {
  while (!chain.done() && roleOf(chain.peek()) == LayerRole::PassThrough) chain.take(flops);
}

ChainNetwork read(const Model& model) {
  if (model.outputs.size() != 1) throw Error("the model has " + std::to_string(model.outputs.size()) + " outputs");
  const ValueInfo& input = model.imageInput();
  const std::map<std::string, Shape> shapes = model.inferShapes(model.inputShapesFor(1));
  ChainNetwork network;
  network.inputHeight = model.inputHeight();
  network.inputWidth = model.inputWidth();
  ChainReader chain(model, shapes, input.name);
  int64_t flops = 0;

  while (skipIdentities(chain, &flops), !chain.done() && roleOf(chain.peek()) == LayerRole::Convolution) {
    const std::vector<Shape> in = chain.inputsOfNext();
    const Node& conv = chain.take(&flops);
    ChainConv layer;
    layer.problem = *conv.op->convProblem(in);
    if (layer.problem.isGrouped() || layer.problem.hasDilation())
      throw Error(ChainReader::describe(conv) + " is grouped or dilated");
    layer.weights = conv.inputs[1];
    layer.bias = conv.inputs.size() > 2 ? conv.inputs[2] : "";
    skipIdentities(chain, &flops);
    if (!chain.done())
      if (const auto activation = activationOf(chain.peek(), chain.currentShape())) {
        chain.take(&flops);
        layer.epilogue.hasActivation = true;
        layer.epilogue.activation = *activation;
        skipIdentities(chain, &flops);
      }
    if (!chain.done()) {
      const std::optional<EpilogueStep> step = chain.peek().op->asEpilogueStep(chain.currentShape());
      if (step && step->isPool) {
        const PoolGeometry& pool = step->pool;
        if (pool.padTop || pool.padLeft || pool.padBottom || pool.padRight)
          throw Error(ChainReader::describe(chain.peek()) + " pads its window");
        chain.take(&flops);
        layer.epilogue.hasPool = true;
        layer.epilogue.maxPool = step->maxPool;
        layer.epilogue.pool = pool;
      }
    }
    const Shape& out = chain.currentShape();
    layer.pooledHeight = static_cast<int>(out[2]);
    layer.pooledWidth = static_cast<int>(out[3]);
    network.convs.push_back(layer);
  }
  if (network.convs.empty())
    throw Error(chain.done() ? "the model has no convolution"
                             : ChainReader::describe(chain.peek()) + " comes before any Conv");

  // The flatten: a Flatten or Reshape to one row per image, which moves no value.
  skipIdentities(chain, &flops);
  if (chain.done()) throw Error("the model ends after its convolutions, with no fully connected layer");
  {
    const Node& node = chain.peek();
    const Shape before = chain.currentShape();
    chain.inputsOfNext();  // a branch is named as such first
    if (roleOf(node) != LayerRole::Flattening)
      throw Error(ChainReader::describe(node) + " follows the convolutions where a Flatten is expected");
    const Shape& after = shapes.at(node.output);
    if (after.size() != 2 || after[0] != 1 || after[1] != elementCount(before))
      throw Error(ChainReader::describe(node) + " does not flatten each image to one row");
    chain.take(&flops);
  }

  while (skipIdentities(chain, &flops), !chain.done() && !chain.peek().op->isRowSoftmax(chain.currentShape())) {
    const std::vector<Shape> in = chain.inputsOfNext();
    const Node& node = chain.peek();
    const std::optional<DenseStep> step = node.op->asDenseStep(in);
    if (!step)
      throw Error(ChainReader::describe(node) + " is not a fully connected layer (a Gemm without transA or scaling)");
    chain.take(&flops);
    ChainDense layer;
    layer.step = *step;
    layer.weights = node.inputs[1];
    layer.bias = step->hasBias ? node.inputs[2] : "";
    skipIdentities(chain, &flops);
    if (!chain.done())
      if (const auto activation = activationOf(chain.peek(), chain.currentShape())) {
        chain.take(&flops);
        layer.hasActivation = true;
        layer.activation = *activation;
      }
    network.dense.push_back(layer);
  }
  if (network.dense.empty()) throw Error("the model has no fully connected layer after its convolutions");
  if (!chain.done()) {
    chain.take(&flops);  // the softmax
    network.softmax = true;
    skipIdentities(chain, &flops);
    if (!chain.done()) throw Error(ChainReader::describe(chain.peek()) + " follows the softmax");
  }
  if (chain.current() != model.outputs.front().name) throw Error("the chain does not end at the model's output");
  for (size_t i = 0; i < model.nodes.size(); ++i) network.nodes.push_back(i);
  for (const ChainConv& conv : network.convs)
    for (const std::string& name : {conv.weights, conv.bias})
      if (!name.empty()) network.weightElements += model.weights.at(name).size();
  for (const ChainDense& dense : network.dense)
    for (const std::string& name : {dense.weights, dense.bias})
      if (!name.empty()) network.weightElements += model.weights.at(name).size();
  network.flopsPerImage = flops;
  return network;
}

}  // namespace

std::optional<ChainNetwork> matchChainNetwork(const Model& model, std::string* whyNot) {
  try {
    return read(model);
  } catch (const Error& e) {
    if (whyNot) *whyNot = std::string("not a chain of conv and fully connected layers: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace convscope
