// Factories of each operator family, used by createOperator(); internal to model/.
#pragma once

#include <memory>

#include "app/core/model/operator.h"

namespace convscope::ops {

std::unique_ptr<Operator> makeConv(OperatorRequest& request);
std::unique_ptr<Operator> makeMaxPool(OperatorRequest& request);
std::unique_ptr<Operator> makeAveragePool(OperatorRequest& request);
std::unique_ptr<Operator> makeGemm(OperatorRequest& request);
std::unique_ptr<Operator> makeMatMul(OperatorRequest& request);
std::unique_ptr<Operator> makeArithmetic(OperatorRequest& request);      // Add, Sub, Mul, Div, Pow
std::unique_ptr<Operator> makeScalarFunction(OperatorRequest& request);  // LeakyRelu, Elu, Gelu, Erf
std::unique_ptr<Operator> makeDropout(OperatorRequest& request);
std::unique_ptr<Operator> makeBatchNormalization(OperatorRequest& request);
std::unique_ptr<Operator> makeGlobalAveragePool(OperatorRequest& request);
std::unique_ptr<Operator> makeReduceMean(OperatorRequest& request);
std::unique_ptr<Operator> makeConcat(OperatorRequest& request);
std::unique_ptr<Operator> makeResize(OperatorRequest& request);
std::unique_ptr<Operator> makeUpsample(OperatorRequest& request);
std::unique_ptr<Operator> makeActivation(OperatorRequest& request);  // Relu, Tanh, Sigmoid, Identity
std::unique_ptr<Operator> makeSoftmax(OperatorRequest& request);
std::unique_ptr<Operator> makeFlatten(OperatorRequest& request);
std::unique_ptr<Operator> makeReshape(OperatorRequest& request);

// Shared checks.
void requireInputCount(const OperatorRequest& request, size_t least, size_t most);
void requireRank(const Shape& shape, int rank, const char* what);
// Maps a negative axis to its positive form; `rankIsValid` admits axis == rank (Flatten).
int normalizeAxis(int64_t axis, int rank, const char* what, bool rankIsValid = false);

}  // namespace convscope::ops
