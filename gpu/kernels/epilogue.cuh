// The device side of a fused epilogue (epilogue.h): the one activate() of every GPU kernel that
// applies an activation, fused after a convolution or on its own (layer_kernels.cu).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

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

// The functions util/activations.h's formulas call on the device: CUDA's, or tanh's hardware
// approximation.
template <bool ApproximateTanh>
struct DeviceMath {
  __device__ __forceinline__ static float tanh(float x) {
    if constexpr (ApproximateTanh) return tanhApproximate(x);
    return tanhf(x);
  }
  __device__ __forceinline__ static float exp(float x) { return expf(x); }
};

// The activation known at compile time (kNone: x itself).
template <FusedActivation A, bool ApproximateTanh = false>
__device__ __forceinline__ float activateAs(float x) {
#define CONVSCOPE_FUSED_ACTIVATION_VALUE(name, onednn, alpha, beta, nondecreasing, value) \
  if constexpr (A == FusedActivation::k##name) {                                          \
    return activationValue<Activation::name, DeviceMath<ApproximateTanh>>(x);             \
  } else
  CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_FUSED_ACTIVATION_VALUE)
#undef CONVSCOPE_FUSED_ACTIVATION_VALUE
  {
    return x;
  }
}

// Calls f(std::integral_constant<FusedActivation, A>{}) for the kind given at run time, kNone
// included: the one switch over the device's kinds.
template <class F>
__device__ __forceinline__ decltype(auto) withFusedActivation(FusedActivation kind, F&& f) {
  switch (kind) {
#define CONVSCOPE_FUSED_ACTIVATION_CASE(name, onednn, alpha, beta, nondecreasing, value) \
  case FusedActivation::k##name:                                                         \
    return f(std::integral_constant<FusedActivation, FusedActivation::k##name>{});
    CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_FUSED_ACTIVATION_CASE)
#undef CONVSCOPE_FUSED_ACTIVATION_CASE
    case FusedActivation::kNone:
      break;
  }
  return f(std::integral_constant<FusedActivation, FusedActivation::kNone>{});
}

// The kind chosen at run time. Inside unrolled loops the compiler may compute every kind and
// select (both tanh and sigmoid for each value): kernels whose epilogue runs per element take
// the kind as a template argument instead (activateAs).
__device__ __forceinline__ float activate(FusedActivation kind, float x) {
  return withFusedActivation(kind, [x](auto a) { return activateAs<decltype(a)::value>(x); });
}

}  // namespace convscope::gpu
