#include <algorithm>
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

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"Conv", ops::makeConv},
      {"MaxPool", ops::makeMaxPool},
      {"AveragePool", ops::makeAveragePool},
      {"Gemm", ops::makeGemm},
      {"MatMul", ops::makeMatMul},
      {"Add", ops::makeArithmetic},
      {"Sub", ops::makeArithmetic},
      {"Mul", ops::makeArithmetic},
      {"Div", ops::makeArithmetic},
      {"Pow", ops::makeArithmetic},
      {"LeakyRelu", ops::makeScalarFunction},
      {"Elu", ops::makeScalarFunction},
      {"Gelu", ops::makeScalarFunction},
      {"Erf", ops::makeScalarFunction},
      {"Dropout", ops::makeDropout},
      {"BatchNormalization", ops::makeBatchNormalization},
      {"GlobalAveragePool", ops::makeGlobalAveragePool},
      {"ReduceMean", ops::makeReduceMean},
      {"Concat", ops::makeConcat},
      {"Resize", ops::makeResize},
      {"Upsample", ops::makeUpsample},
      {"Relu", ops::makeActivation},
      {"Tanh", ops::makeActivation},
      {"Sigmoid", ops::makeActivation},
      {"Identity", ops::makeActivation},
      {"Softmax", ops::makeSoftmax},
      {"Flatten", ops::makeFlatten},
      {"Reshape", ops::makeReshape},
  };
  return table;
}

}  // namespace

std::unique_ptr<Operator> createOperator(OperatorRequest& request) {
  const auto it = factories().find(request.opType);
  if (it == factories().end()) {
    std::string known;
    for (const std::string& name : supportedOperators()) known += (known.empty() ? "" : ", ") + name;
    throw Error("operator " + request.opType + " is not supported (ConvScope runs " + known + ")");
  }
  if (request.outputCount != 1)
    throw Error(std::to_string(request.outputCount) + " outputs requested; only the first output of " + request.opType +
                " is supported");
  return it->second(request);
}

const std::vector<std::string>& supportedOperators() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& [name, factory] : factories()) list.push_back(name);
    list.push_back("Constant");  // folded into weights by the loader
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
