// The epilogue a GPU kernel fuses after its convolution (the bias, an activation, a pooling), as
// the kernels take it: typed, so that no kernel reads -1 or 2 as "none" or "average". The core's
// ConvEpilogue (app/core/conv/conv_backend.h) becomes this description here and nowhere else;
// the device side, activate(), is in epilogue.cuh. Plain C++: the tests check the host rules
// below without a GPU.
#pragma once

#include <cstdint>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/conv_problem.h"

namespace convscope::gpu {

// None, or one of util/activations.h's list (kRelu, kTanh, kSigmoid, ...).
enum class FusedActivation : uint8_t {
  kNone,
#define CONVSCOPE_FUSED_ACTIVATION_ENUMERATOR(name, onednn, alpha, beta, nondecreasing, value) k##name,
  CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_FUSED_ACTIVATION_ENUMERATOR)
#undef CONVSCOPE_FUSED_ACTIVATION_ENUMERATOR
};
enum class FusedPooling : uint8_t { kNone, kMax, kAverage };

// The part of an epilogue every fusing kernel shares; each kernel adds the pooling geometry it
// handles (any window, windows up to 2x2, or only the 2x2 one of stride 2).
struct FusedEpilogue {
  const float* bias = nullptr;  // [outChannels]; nullptr: none
  FusedActivation activation = FusedActivation::kNone;
  FusedPooling pooling = FusedPooling::kNone;
};

constexpr FusedActivation fusedActivationOf(Activation activation) {
  switch (activation) {
#define CONVSCOPE_FUSED_ACTIVATION_OF(name, onednn, alpha, beta, nondecreasing, value) \
  case Activation::name:                                                               \
    return FusedActivation::k##name;
    CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_FUSED_ACTIVATION_OF)
#undef CONVSCOPE_FUSED_ACTIVATION_OF
  }
  return FusedActivation::kNone;
}

// Whether the maximum of the activation over a pooling window is the activation of the maximum
// (kNone, and every nondecreasing activation of the list): the tensor-core kernels then pool
// first and activate once a window; otherwise (HardSwish) they activate every value first.
constexpr bool maxPoolCommutesWith(FusedActivation activation) {
  switch (activation) {
#define CONVSCOPE_FUSED_ACTIVATION_MONOTONIC(name, onednn, alpha, beta, nondecreasing, value) \
  case FusedActivation::k##name:                                                              \
    return nondecreasing;
    CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_FUSED_ACTIVATION_MONOTONIC)
#undef CONVSCOPE_FUSED_ACTIVATION_MONOTONIC
    case FusedActivation::kNone:
      break;
  }
  return true;
}

constexpr FusedActivation fusedActivationOf(bool hasActivation, Activation activation) {
  return hasActivation ? fusedActivationOf(activation) : FusedActivation::kNone;
}

inline FusedEpilogue fusedEpilogueOf(const ConvEpilogue& e) {
  FusedEpilogue fused;
  fused.bias = e.bias;
  fused.activation = fusedActivationOf(e.hasActivation, e.activation);
  fused.pooling = !e.hasPool ? FusedPooling::kNone : e.maxPool ? FusedPooling::kMax : FusedPooling::kAverage;
  return fused;
}

// The pooling the tensor-core kernels (implicit_gemm_mma.cuh) fuse after a conv of `p`: 2x2
// windows of stride 2, unpadded, each wholly inside the conv output (so not ceil mode, which
// would leave a partial last window), and at least one of them (a conv output of one row or
// column has none: its pooling is empty, and the kernel's plan would have no rows).
inline bool isWholeTwoByTwoPool(const ConvProblem& p, const PoolGeometry& g) {
  return g.kernelHeight == 2 && g.kernelWidth == 2 && g.strideHeight == 2 && g.strideWidth == 2 && !g.padTop &&
         !g.padLeft && !g.padBottom && !g.padRight && g.outHeight == p.outHeight() / 2 &&
         g.outWidth == p.outWidth() / 2 && g.outHeight > 0 && g.outWidth > 0;
}

}  // namespace convscope::gpu
