// The device side of a fused epilogue (epilogue.h): the one activate() of every GPU kernel that
// applies an activation, fused after a convolution or on its own (layer_kernels.cu).
#pragma once

#include <cuda_runtime.h>

#include "gpu/kernels/epilogue.h"

namespace convscope::gpu {

__device__ __forceinline__ float activate(FusedActivation kind, float x) {
  switch (kind) {
    case FusedActivation::kRelu:
      return fmaxf(x, 0.0f);
    case FusedActivation::kTanh:
      return tanhf(x);
    case FusedActivation::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case FusedActivation::kNone:
      break;
  }
  return x;
}

}  // namespace convscope::gpu
