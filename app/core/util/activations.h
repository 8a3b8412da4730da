// Every activation a convolution can fuse into its epilogue, listed once. A row is
//   X(Name, oneDnnAlgorithm, oneDnnAlpha, oneDnnBeta, nondecreasing, value)
// Name: the ONNX operator's type (the enumerator, and the word in a variant's fusableOps);
// oneDnnAlgorithm, oneDnnAlpha, oneDnnBeta: the dnnl::algorithm and its two parameters that the
// oneDNN variant appends as a post-op to compute the same function; nondecreasing: whether
// x <= y implies f(x) <= f(y), so that the maximum of f over a pooling window is f of the
// maximum (the tensor-core kernels then pool before they activate: one activation a window, not
// four); value: the arithmetic, an expression of the float
// `x` in which transcendental functions are Math's, so that the host (SIMD loops, glibc's vector maths) and the device
// (CUDA's, or the hardware's approximation in the TF32 kernels) compute the same formula with their own functions. The
// enum, the names, the host loops (host_activation.cpp), the device kinds and their compile-time dispatch
// (gpu/kernels/epilogue.*), the oneDNN post-op and the tests' lists are made from this list; what it cannot make -- the
// ONNX operator's factory and the tests' independent double-precision reference -- the build or the tests name
// (docs/architecture.md, "Adding a fusable activation"). Plain C++: nvcc and the host compiler both read it.
#pragma once

#include <cmath>
#include <type_traits>

#include "app/core/util/host_device.h"

// Sigmoid's argument is clamped so that exp stays finite: under -ffast-math (the host's loops) an
// infinite exp gives NaN, not 0; beyond 88 the sigmoid is 0 or 1 to float precision anyway. The
// clamp compares (fminf/fmaxf would turn a NaN into a bound, hiding a kernel's NaN as 0 or 1).
// Clip is ONNX's Clip to [0, 6], ReLU6 (MobileNet's, EfficientNet-Lite's): the one range of Clip
// a conv fuses; the operator's factory makes any other range an operator of its own.
#define CONVSCOPE_FUSABLE_ACTIVATIONS(X)                         \
  X(Relu, eltwise_relu, 0.0f, 0.0f, true, (x > 0.0f ? x : 0.0f)) \
  X(Tanh, eltwise_tanh, 0.0f, 0.0f, true, (Math::tanh(x)))       \
  X(Sigmoid, eltwise_logistic, 0.0f, 0.0f, true,                 \
    (1.0f / (1.0f + Math::exp(x > 88.0f    ? -88.0f              \
                              : x < -88.0f ? 88.0f               \
                                           : -x))))              \
  X(HardSwish, eltwise_hardswish, 1.0f / 6.0f, 0.5f, false,      \
    (x * (x < -3.0f  ? 0.0f                                      \
          : x > 3.0f ? 1.0f                                      \
                     : x / 6.0f + 0.5f)))                        \
  X(Clip, eltwise_clip, 0.0f, 6.0f, true, (x < 0.0f ? 0.0f : x > 6.0f ? 6.0f : x))

namespace convscope {

enum class Activation {
#define CONVSCOPE_ACTIVATION_ENUMERATOR(name, onednn, alpha, beta, nondecreasing, value) name,
  CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ACTIVATION_ENUMERATOR)
#undef CONVSCOPE_ACTIVATION_ENUMERATOR
};

inline constexpr Activation kFusableActivations[] = {
#define CONVSCOPE_ACTIVATION_ITEM(name, onednn, alpha, beta, nondecreasing, value) Activation::name,
    CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ACTIVATION_ITEM)
#undef CONVSCOPE_ACTIVATION_ITEM
};

// The ONNX operator type of an activation ("Relu").
constexpr const char* onnxTypeOf(Activation activation) {
  switch (activation) {
#define CONVSCOPE_ACTIVATION_NAME(name, onednn, alpha, beta, nondecreasing, value) \
  case Activation::name:                                                           \
    return #name;
    CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ACTIVATION_NAME)
#undef CONVSCOPE_ACTIVATION_NAME
  }
  return "";
}

// The activation's value at x, the kind known at compile time (so that a loop over many values
// vectorises, and a kernel never computes every kind to select one). Math provides tanh and exp.
// (nvcc: Math's functions may be device-only, as the GPU's tanh approximation is; each
// instantiation is called from one side only.)
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <Activation A, class Math>
CONVSCOPE_HOST_DEVICE float activationValue(float x) {
#define CONVSCOPE_ACTIVATION_VALUE(name, onednn, alpha, beta, nondecreasing, value) \
  if constexpr (A == Activation::name) {                                            \
    return value;                                                                   \
  } else
  CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ACTIVATION_VALUE)
#undef CONVSCOPE_ACTIVATION_VALUE
  {
    static_assert(A != A, "an activation without its value in CONVSCOPE_FUSABLE_ACTIVATIONS");
    return x;
  }
}

// Calls f(std::integral_constant<Activation, A>{}) for the activation given at run time: the
// one switch that turns a run-time kind into code that knows it at compile time.
template <class F>
CONVSCOPE_HOST_DEVICE decltype(auto) withActivation(Activation activation, F&& f) {
  switch (activation) {
#define CONVSCOPE_ACTIVATION_CASE(name, onednn, alpha, beta, nondecreasing, value) \
  case Activation::name:                                                           \
    return f(std::integral_constant<Activation, Activation::name>{});
    CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ACTIVATION_CASE)
#undef CONVSCOPE_ACTIVATION_CASE
  }
  return f(std::integral_constant<Activation, kFusableActivations[0]>{});  // not reached
}

}  // namespace convscope
