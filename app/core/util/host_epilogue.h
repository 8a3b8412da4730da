// The CPU arithmetic of the layers that can follow a convolution: activations and 2-D pooling on
// host memory. The operators (the activations of activations.h, MaxPool, AveragePool) and the CPU conv variants
// that fuse them into their own pass call the same functions, so a fused epilogue computes
// exactly what the separate layers compute.
#pragma once

#include <cstdint>

#include "app/core/util/epilogue.h"

namespace convscope {

// output[i] = activation(input[i]) for i < count (output may be input); single-threaded: callers
// parallelise.
void applyActivation(Activation kind, const float* input, float* output, int64_t count);

// Pools planes [firstPlane, firstPlane + planeCount) of `input` (each inHeight x inWidth) into
// the same planes of `output` (each outHeight x outWidth); single-threaded. Max pooling of a
// window that lies wholly in the padding gives -inf; average pooling divides by the window
// clipped to the padded input when countIncludePad, else by its real elements (0 when none).
void poolPlanes(const PoolGeometry& geometry, bool maxPool, const float* input, float* output, int64_t firstPlane,
                int64_t planeCount);

// The same pooling of `images` images of `channels` channels read from a channel-blocked layout
// (oneDNN's nChw8c / nChw16c: [image][channel / block][h][w][channel % block], the channels
// padded to a whole block) into NCHW `output`: the pooled values are poolPlanes()'s exactly.
// `block`: 8 or 16.
void poolBlockedPlanes(const PoolGeometry& geometry, bool maxPool, int block, int channels, const float* input,
                       float* output, int64_t images);

}  // namespace convscope
