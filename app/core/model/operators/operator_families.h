// The factory of each ONNX operator type, used by createOperator(); internal to model/. One per
// type, so that only operator_factory.cpp's table names the types.
#pragma once

#include <memory>

#include "app/core/model/operator.h"

namespace convscope::ops {

// conv_op.cpp
std::unique_ptr<Operator> makeConv(OperatorRequest& request);
// pool_ops.cpp
std::unique_ptr<Operator> makeMaxPool(OperatorRequest& request);
std::unique_ptr<Operator> makeAveragePool(OperatorRequest& request);
// dense_ops.cpp
std::unique_ptr<Operator> makeGemm(OperatorRequest& request);
std::unique_ptr<Operator> makeMatMul(OperatorRequest& request);
// arithmetic_ops.cpp
std::unique_ptr<Operator> makeAdd(OperatorRequest& request);
std::unique_ptr<Operator> makeSub(OperatorRequest& request);
std::unique_ptr<Operator> makeMul(OperatorRequest& request);
std::unique_ptr<Operator> makeDiv(OperatorRequest& request);
std::unique_ptr<Operator> makePow(OperatorRequest& request);
// activation_ops.cpp
// Every fusable activation of util/activations.h (Relu, Tanh, Sigmoid): one factory, made for
// each row of that list (the operator table's rows are made from it too).
template <Activation A>
std::unique_ptr<Operator> makeFusableActivation(OperatorRequest& request);
std::unique_ptr<Operator> makeIdentity(OperatorRequest& request);
std::unique_ptr<Operator> makeLeakyRelu(OperatorRequest& request);
std::unique_ptr<Operator> makeElu(OperatorRequest& request);
std::unique_ptr<Operator> makeGelu(OperatorRequest& request);
std::unique_ptr<Operator> makeErf(OperatorRequest& request);
std::unique_ptr<Operator> makeDropout(OperatorRequest& request);
// channel_ops.cpp
std::unique_ptr<Operator> makeBatchNormalization(OperatorRequest& request);
std::unique_ptr<Operator> makeGlobalAveragePool(OperatorRequest& request);
std::unique_ptr<Operator> makeReduceMean(OperatorRequest& request);
std::unique_ptr<Operator> makeConcat(OperatorRequest& request);
// resize_op.cpp
std::unique_ptr<Operator> makeResize(OperatorRequest& request);
std::unique_ptr<Operator> makeUpsample(OperatorRequest& request);
// softmax_op.cpp
std::unique_ptr<Operator> makeSoftmax(OperatorRequest& request);
// shape_ops.cpp
std::unique_ptr<Operator> makeFlatten(OperatorRequest& request);
std::unique_ptr<Operator> makeReshape(OperatorRequest& request);

// Shared checks.
void requireInputCount(const OperatorRequest& request, size_t least, size_t most);
void requireRank(const Shape& shape, int rank, const char* what);
// Maps a negative axis to its positive form; `rankIsValid` admits axis == rank (Flatten).
int normalizeAxis(int64_t axis, int rank, const char* what, bool rankIsValid = false);

}  // namespace convscope::ops
