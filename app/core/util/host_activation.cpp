// The activations of host_epilogue.h: the formulas of util/activations.h in SIMD loops. This file
// is built with -ffast-math (see app/core/CMakeLists.txt) so that GCC calls glibc's vectorised
// tanhf/expf (libmvec, a few ULP) inside the loops: tanh over 10,000 feature-map stacks is
// otherwise slower than the convolutions themselves. The pooling lives in host_pooling.cpp,
// without it: its sums must keep their order.
#include <cmath>

#include "app/core/util/activations.h"
#include "app/core/util/host_epilogue.h"

namespace convscope {
namespace {

struct HostMath {
  static float tanh(float x) { return std::tanh(x); }
  static float exp(float x) { return std::exp(x); }
};

}  // namespace

void applyActivation(Activation kind, const float* input, float* output, int64_t count) {
  withActivation(kind, [&](auto activation) {
    constexpr Activation kKind = decltype(activation)::value;
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) output[i] = activationValue<kKind, HostMath>(input[i]);
  });
}

}  // namespace convscope
