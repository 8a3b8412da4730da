// NumPy-style broadcasting, as ONNX defines it for Add and Gemm's C input.
#pragma once

#include <cstdint>
#include <vector>

#include "app/core/util/tensor.h"

namespace convscope::ops {

// The broadcast shape of a and b; throws convscope::Error when they are incompatible.
Shape broadcastShape(const Shape& a, const Shape& b);

// The strides of `source` in `target`'s coordinates (which it must broadcast to): one per axis of
// target, 0 along the axes it is broadcast over and the leading ones it lacks.
std::vector<int64_t> broadcastStrides(const Shape& source, const Shape& target);

// `source` expanded to `target` (which it must broadcast to).
Tensor broadcastTo(const Tensor& source, const Shape& target);

}  // namespace convscope::ops
