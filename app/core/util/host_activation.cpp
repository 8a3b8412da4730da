// The activations of host_epilogue.h. This file is built with -ffast-math (see
// app/core/CMakeLists.txt) so that GCC calls glibc's vectorised tanhf/expf (libmvec, a few ULP)
// inside the SIMD loops: tanh over 10,000 feature-map stacks is otherwise slower than the
// convolutions themselves. The pooling lives in host_pooling.cpp, without it: its sums must keep
// their order.
#include "app/core/util/host_epilogue.h"

#include <algorithm>
#include <cmath>

namespace convscope {

void applyActivation(Activation kind, const float* input, float* output, int64_t count) {
  switch (kind) {
    case Activation::Relu:
#pragma omp simd
      for (int64_t i = 0; i < count; ++i) output[i] = input[i] > 0.0f ? input[i] : 0.0f;
      break;
    case Activation::Tanh:
#pragma omp simd
      for (int64_t i = 0; i < count; ++i) output[i] = std::tanh(input[i]);
      break;
    case Activation::Sigmoid:
#pragma omp simd
      // Clamped so that exp stays finite: under -ffast-math an infinite exp gives NaN, not 0.
      // Beyond 88 the sigmoid is 0 or 1 to float precision anyway.
      for (int64_t i = 0; i < count; ++i) output[i] = 1.0f / (1.0f + std::exp(std::clamp(-input[i], -88.0f, 88.0f)));
      break;
  }
}

}  // namespace convscope
