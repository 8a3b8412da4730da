// NumPy-style broadcasting, as ONNX defines it for Add and Gemm's C input.
#pragma once

#include "app/core/util/tensor.h"

namespace convscope::ops {

// The broadcast shape of a and b; throws convscope::Error when they are incompatible.
Shape broadcastShape(const Shape& a, const Shape& b);

// `source` expanded to `target` (which it must broadcast to).
Tensor broadcastTo(const Tensor& source, const Shape& target);

}  // namespace convscope::ops
