// The device side of a fused epilogue (epilogue.h): the one activate() of every GPU kernel that
// applies an activation, fused after a convolution or on its own (layer_kernels.cu).
#pragma once

#include <cuda_runtime.h>

#include "gpu/kernels/epilogue.h"

namespace convscope::gpu {

// tanh by the hardware's approximation (tanh.approx, sm_75+): a relative error of about 2^-11, the
// order of TF32's own rounding of each factor, so the TF32 kernels' epilogues use it (tanhf is some
// 25 instructions, a third of the course's first layer's). Everything else keeps tanhf.
__device__ __forceinline__ float tanhApproximate(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}

template <FusedActivation A, bool ApproximateTanh = false>
__device__ __forceinline__ float activateAs(float x) {
  if constexpr (A == FusedActivation::kRelu) {
    return fmaxf(x, 0.0f);
  } else if constexpr (A == FusedActivation::kTanh) {
    if constexpr (ApproximateTanh) return tanhApproximate(x);
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
