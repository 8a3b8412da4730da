// What the course's kernels share: the problem as a kernel argument (ConvProblem's methods are
// host-only) and the launchers' check of the problem and pointers.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <tuple>

#include "app/core/util/error.h"
#include "gpu/conv_kernel.h"

namespace convscope::gpu {

// The one device-side description of a convolution, made from a ConvProblem by shapeOf() and
// passed by value to every kernel (alone or inside direct_conv::DirectConvArgs). padBottom and
// padRight are left out: a kernel needs only the output size they imply. The field order is
// part of the generated code (it decides which parameters ptxas loads in pairs): this one keeps
// the tuned direct-convolution kernels' machine code as it was; reordering is a change to time.
struct ConvShape {
  int batch, inChannels, inHeight, inWidth;
  int outChannels, outHeight, outWidth;
  int kernelHeight, kernelWidth, strideHeight, strideWidth, padTop, padLeft;

  // For host-side caches keyed by shape.
  auto tied() const {
    return std::tie(batch, inChannels, inHeight, inWidth, outChannels, outHeight, outWidth, kernelHeight, kernelWidth,
                    strideHeight, strideWidth, padTop, padLeft);
  }
  bool operator<(const ConvShape& other) const { return tied() < other.tied(); }
};

inline ConvShape shapeOf(const ConvProblem& p) {
  ConvShape s{};
  s.batch = p.batch;
  s.inChannels = p.inChannels;
  s.inHeight = p.inHeight;
  s.inWidth = p.inWidth;
  s.outChannels = p.outChannels;
  s.outHeight = p.outHeight();
  s.outWidth = p.outWidth();
  s.kernelHeight = p.kernelHeight;
  s.kernelWidth = p.kernelWidth;
  s.strideHeight = p.strideHeight;
  s.strideWidth = p.strideWidth;
  s.padTop = p.padTop;
  s.padLeft = p.padLeft;
  return s;
}

// A flat grid of `blocks`, clamped to what a launch takes (the kernels then loop grid-stride).
inline int flatGrid(int64_t blocks) {
  return static_cast<int>(blocks < INT_MAX ? blocks : INT_MAX);
}

inline void requireValidLaunch(const ConvLaunch& l, const char* kernel) {
  const ConvProblem& p = l.problem;
  const bool positive = p.batch > 0 && p.inChannels > 0 && p.inHeight > 0 && p.inWidth > 0 && p.outChannels > 0 &&
                        p.kernelHeight > 0 && p.kernelWidth > 0 && p.strideHeight > 0 && p.strideWidth > 0;
  const bool padsOk = p.padTop >= 0 && p.padLeft >= 0 && p.padBottom >= 0 && p.padRight >= 0;
  const bool windowFits = padsOk && int64_t{p.inHeight} + p.padTop + p.padBottom >= p.kernelHeight &&
                          int64_t{p.inWidth} + p.padLeft + p.padRight >= p.kernelWidth;
  if (!positive || !windowFits)
    throw Error(std::string(kernel) + ": empty or invalid convolution (" + p.describe() + ")");
  if (!l.input || !l.weights || !l.output) throw Error(std::string(kernel) + ": null device pointer");
  // Every row declines these shapes (gpu_variants.cpp); reaching a kernel would compute garbage.
  if (p.isGrouped() || p.hasDilation())
    throw Error(std::string(kernel) + ": grouped or dilated convolution reached a kernel that computes neither (" +
                p.describe() + ")");
}

}  // namespace convscope::gpu
