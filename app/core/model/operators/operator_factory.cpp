#include <algorithm>
#include <cctype>
#include <map>

#include "app/core/model/operators/operator_families.h"
#include "app/core/util/error.h"

namespace convscope {

DeviceTensor Operator::runOnDevice(const std::vector<const DeviceTensor*>& inputs, DeviceRun& run) const {
  std::vector<Tensor> host;
  for (const DeviceTensor* in : inputs) {
    host.emplace_back(in->shape);
    run.device.download(*in, host.back().data());
  }
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : host) pointers.push_back(&t);
  struct NoConv final : ConvExecutor {
    void convolve(const ConvProblem&, const float*, const float*, float*) override {
      throw Error("internal: a convolution reached the host fallback");
    }
  } noConv;
  const Tensor out = this->run(pointers, noConv);
  return run.device.upload(out.data(), out.shape());
}

namespace {

using Factory = std::unique_ptr<Operator> (*)(OperatorRequest&);

struct OperatorRow {
  Factory make = nullptr;  // nullptr: the loader folds it away (Constant) and never asks for one
  LayerDescription description;
};

std::string lowerCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

const std::map<std::string, OperatorRow>& operatorTable() {
  using enum LayerRole;
  static const std::map<std::string, OperatorRow> table = {
      {"Conv", {ops::makeConv, {"conv", Convolution}}},
      {"MaxPool", {ops::makeMaxPool, {"max-pool", WindowPooling}}},
      {"AveragePool", {ops::makeAveragePool, {"avg-pool", WindowPooling}}},
      {"Gemm", {ops::makeGemm, {"dense", Dense}}},
      {"MatMul", {ops::makeMatMul, {"dense", Dense}}},
      {"Add", {ops::makeAdd, {"add", Other}}},
      {"Sub", {ops::makeSub, {"sub", Other}}},
      {"Mul", {ops::makeMul, {"mul", Other}}},
      {"Div", {ops::makeDiv, {"div", Other}}},
      {"Pow", {ops::makePow, {"pow", Other}}},
      {"LeakyRelu", {ops::makeLeakyRelu, {"leaky-relu", Other}}},
      {"Elu", {ops::makeElu, {"elu", Other}}},
      {"Gelu", {ops::makeGelu, {"gelu", Other}}},
      {"Erf", {ops::makeErf, {"erf", Other}}},
      {"Dropout", {ops::makeDropout, {"dropout", PassThrough}}},
      {"BatchNormalization", {ops::makeBatchNormalization, {"batch-norm", Other}}},
      {"GlobalAveragePool", {ops::makeGlobalAveragePool, {"global-avg-pool", Reshaping}}},
      {"ReduceMean", {ops::makeReduceMean, {"mean", Reshaping}}},
      {"Concat", {ops::makeConcat, {"concat", Concatenation}}},
      {"Resize", {ops::makeResize, {"resize", Reshaping}}},
      {"Upsample", {ops::makeUpsample, {"upsample", Reshaping}}},
  // Relu, Tanh, Sigmoid: every row of util/activations.h, its kind the name in lower case.
#define CONVSCOPE_ACTIVATION_ROW(name, onednn, alpha, beta, nondecreasing, value) \
  {#name, {ops::makeFusableActivation<Activation::name>, {lowerCase(#name), Other}}},
      CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ACTIVATION_ROW)
#undef CONVSCOPE_ACTIVATION_ROW
          {"Identity", {ops::makeIdentity, {"identity", PassThrough}}},
      {"Softmax", {ops::makeSoftmax, {"softmax", Softmax}}},
      {"Flatten", {ops::makeFlatten, {"flatten", Flattening}}},
      {"Reshape", {ops::makeReshape, {"reshape", Flattening}}},
      {"Constant", {nullptr, {"constant", Other}}},
  };
  return table;
}

}  // namespace

std::unique_ptr<Operator> createOperator(OperatorRequest& request) {
  const auto it = operatorTable().find(request.opType);
  if (it == operatorTable().end() || !it->second.make) {
    std::string known;
    for (const std::string& name : supportedOperators()) known += (known.empty() ? "" : ", ") + name;
    throw Error("operator " + request.opType + " is not supported (ConvScope runs " + known + ")");
  }
  if (request.outputCount != 1)
    throw Error(std::to_string(request.outputCount) + " outputs requested; only the first output of " + request.opType +
                " is supported");
  std::unique_ptr<Operator> op = it->second.make(request);
  op->description_ = it->second.description;
  return op;
}

LayerDescription describeOperator(const std::string& opType) {
  if (const auto it = operatorTable().find(opType); it != operatorTable().end()) return it->second.description;
  return {lowerCase(opType), LayerRole::Other};
}

const std::vector<std::string>& supportedOperators() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& [name, row] : operatorTable()) list.push_back(name);  // Constant: folded by the loader
    std::sort(list.begin(), list.end());
    return list;
  }();
  return names;
}

bool isSupportedOperator(const std::string& opType) {
  const auto& names = supportedOperators();
  return std::find(names.begin(), names.end(), opType) != names.end();
}

namespace ops {

void requireInputCount(const OperatorRequest& request, size_t least, size_t most) {
  const size_t n = request.inputs.size();
  if (n < least || n > most)
    throw Error("takes " +
                (least == most ? std::to_string(least) : std::to_string(least) + " to " + std::to_string(most)) +
                " inputs, got " + std::to_string(n));
  for (const std::string& name : request.inputs)
    if (name.empty()) throw Error("an omitted optional input in the middle of the inputs is not supported");
}

void requireRank(const Shape& shape, int rank, const char* what) {
  if (static_cast<int>(shape.size()) != rank)
    throw Error(std::string(what) + " must have rank " + std::to_string(rank) + ", got shape " + shapeToString(shape));
}

int normalizeAxis(int64_t axis, int rank, const char* what, bool rankIsValid) {
  if (axis < -rank || axis >= rank + (rankIsValid ? 1 : 0))
    throw Error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace ops
}  // namespace convscope
