// The one host softmax: the Softmax operator and the engine (which turns a model's class scores
// into probabilities when the model does not end in Softmax) both call it, so the two agree to
// the last bit.
#pragma once

#include <cstdint>

namespace convscope {

// Softmax over the middle axis of an [outer][length][inner] view of `input` into `output` (which
// may not alias it): output = exp(x - max) / sum(exp(x - max)) along `length`, the maximum
// subtracted so that large scores do not overflow. Parallel over `outer` when the tensor is large.
void softmaxAlongAxis(const float* input, float* output, int64_t outer, int64_t length, int64_t inner);

}  // namespace convscope
