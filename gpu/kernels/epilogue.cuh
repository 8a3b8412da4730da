// The device side of a fused epilogue (epilogue.h): the one activate() of every GPU kernel that
// applies an activation, fused after a convolution or on its own (layer_kernels.cu).
#pragma once

#include <cuda_runtime.h>

#include "gpu/kernels/epilogue.h"

namespace convscope::gpu {

template <FusedActivation A>
__device__ __forceinline__ float activateAs(float x) {
  if constexpr (A == FusedActivation::kRelu) {
    return fmaxf(x, 0.0f);
  } else if constexpr (A == FusedActivation::kTanh) {
    return tanhf(x);
  } else if constexpr (A == FusedActivation::kSigmoid) {
    return 1.0f / (1.0f + expf(-x));
  } else {
    return x;
  }
}

// The kind chosen at run time. Inside unrolled loops the compiler may compute every kind and
// select (both tanh and sigmoid for each value): kernels whose epilogue runs per element take
// the kind as a template argument instead (activateAs).
__device__ __forceinline__ float activate(FusedActivation kind, float x) {
  switch (kind) {
    case FusedActivation::kRelu:
      return activateAs<FusedActivation::kRelu>(x);
    case FusedActivation::kTanh:
      return activateAs<FusedActivation::kTanh>(x);
    case FusedActivation::kSigmoid:
      return activateAs<FusedActivation::kSigmoid>(x);
    case FusedActivation::kNone:
      break;
  }
  return x;
}

}  // namespace convscope::gpu
