// The course network's two conv layers (course-high and course-low), as the tests spell them:
// 1x48x48 -> 12x42x42 and 12x21x21 -> 24x15x15, 7x7 kernels, no padding, stride 1.
#pragma once

#include "app/core/conv/conv_problem.h"

namespace convscope::testing {

inline ConvProblem courseConv1(int batch) {
  return {.batch = batch,
          .inChannels = 1,
          .inHeight = 48,
          .inWidth = 48,
          .outChannels = 12,
          .kernelHeight = 7,
          .kernelWidth = 7};
}

inline ConvProblem courseConv2(int batch) {
  return {.batch = batch,
          .inChannels = 12,
          .inHeight = 21,
          .inWidth = 21,
          .outChannels = 24,
          .kernelHeight = 7,
          .kernelWidth = 7};
}

}  // namespace convscope::testing
