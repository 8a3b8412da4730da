// The pluggable convolution: the engine hands every Conv node's arithmetic to one backend chosen
// by name from the registry (conv_registry.h). Bias is added by the engine afterwards, so a
// backend computes exactly the course's kernel: y[n][m][h][w] = sum_c,p,q x[..] * k[m][c][p][q].
#pragma once

#include <cstdint>
#include <string>

#include "app/core/conv/conv_problem.h"

namespace convscope {

class ConvBackend {
 public:
  virtual ~ConvBackend() = default;

  // Empty when this backend computes `problem`; otherwise the reason it does not (the engine
  // then falls back to cpu-reference for that layer and says so).
  virtual std::string unsupportedReason(const ConvProblem& problem) const {
    (void)problem;
    return {};
  }

  // Bytes of scratch memory forward() allocates for `problem` (the im2col matrix, ...), so the
  // engine can refuse a layer whose workspace would not fit before running it.
  virtual int64_t workspaceBytes(const ConvProblem& problem) const {
    (void)problem;
    return 0;
  }

  // Host pointers: input NCHW, weights MCKK, output N x M x outHeight x outWidth (overwritten).
  virtual void forward(const ConvProblem& problem, const float* input, const float* weights, float* output) = 0;
};

}  // namespace convscope
