// One ConvKernel per course variant, each defined in its own file in this folder.
#pragma once

#include "gpu/conv_kernel.h"

namespace convscope::gpu {

extern const ConvKernel kConvBaseline;         // conv_baseline.cu
extern const ConvKernel kConvTiledShared;      // conv_tiled_shared.cu
extern const ConvKernel kConvConstantWeights;  // conv_constant_weights.cu
extern const ConvKernel kConvUnrollGemm;       // conv_unroll_gemm.cu
extern const ConvKernel kConvFusedUnrollGemm;  // conv_fused_unroll_gemm.cu
extern const ConvKernel kConvAtomics;          // conv_atomics.cu
extern const ConvKernel kConvPerLayer;         // conv_per_layer.cu
extern const ConvKernel kConvRestrictUnroll;   // conv_restrict_unroll.cu
extern const ConvKernel kConvCudnn;            // conv_cudnn.cu

}  // namespace convscope::gpu
