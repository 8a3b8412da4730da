// What the course's kernels share: the problem as a kernel argument (ConvProblem's methods are
// host-only) and the launchers' check of the problem and pointers.
#pragma once

#include <cstdint>
#include <string>

#include "app/core/util/error.h"
#include "gpu/conv_kernel.h"

namespace convscope::gpu {

struct ConvShape {
  int batch, inChannels, inHeight, inWidth;
  int outChannels, kernelHeight, kernelWidth;
  int strideHeight, strideWidth, padTop, padLeft;
  int outHeight, outWidth;
};

inline ConvShape shapeOf(const ConvProblem& p) {
  return {p.batch,        p.inChannels,  p.inHeight, p.inWidth, p.outChannels, p.kernelHeight, p.kernelWidth,
          p.strideHeight, p.strideWidth, p.padTop,   p.padLeft, p.outHeight(), p.outWidth()};
}

inline void requireValidLaunch(const ConvLaunch& l, const char* id) {
  const ConvProblem& p = l.problem;
  const bool positive = p.batch > 0 && p.inChannels > 0 && p.inHeight > 0 && p.inWidth > 0 && p.outChannels > 0 &&
                        p.kernelHeight > 0 && p.kernelWidth > 0 && p.strideHeight > 0 && p.strideWidth > 0;
  const bool padsOk = p.padTop >= 0 && p.padLeft >= 0 && p.padBottom >= 0 && p.padRight >= 0;
  const bool windowFits = padsOk && int64_t{p.inHeight} + p.padTop + p.padBottom >= p.kernelHeight &&
                          int64_t{p.inWidth} + p.padLeft + p.padRight >= p.kernelWidth;
  if (!positive || !windowFits) throw Error(std::string(id) + ": empty or invalid convolution (" + p.describe() + ")");
  if (!l.input || !l.weights || !l.output) throw Error(std::string(id) + ": null device pointer");
}

}  // namespace convscope::gpu
