// The convolution written straight from its definition, accumulated in double: the tests'
// yardstick, independent of every backend's code. Groups and dilation as ONNX defines them.
#pragma once

#include <cstdint>
#include <vector>

#include "app/core/conv/conv_problem.h"

namespace convscope::testing {

// `bias`: [outChannels], or nullptr.
inline std::vector<double> directConvolution(const ConvProblem& p, const float* x, const float* w,
                                             const float* bias = nullptr) {
  std::vector<double> y(static_cast<size_t>(p.outputElements()));
  size_t i = 0;
  for (int n = 0; n < p.batch; ++n)
    for (int m = 0; m < p.outChannels; ++m)
      for (int oh = 0; oh < p.outHeight(); ++oh)
        for (int ow = 0; ow < p.outWidth(); ++ow, ++i) {
          double sum = bias ? bias[m] : 0.0;
          // Output channel m belongs to group m / (M / G) and reads only that group's C / G
          // input channels; its weights hold C / G channels.
          const int perGroupIn = p.inChannels / p.group;
          const int group = m / (p.outChannels / p.group);
          for (int c = 0; c < perGroupIn; ++c)
            for (int kh = 0; kh < p.kernelHeight; ++kh)
              for (int kw = 0; kw < p.kernelWidth; ++kw) {
                const int ih = oh * p.strideHeight - p.padTop + kh * p.dilationHeight;
                const int iw = ow * p.strideWidth - p.padLeft + kw * p.dilationWidth;
                if (ih < 0 || iw < 0 || ih >= p.inHeight || iw >= p.inWidth) continue;
                const int channel = group * perGroupIn + c;
                sum += double{x[((int64_t{n} * p.inChannels + channel) * p.inHeight + ih) * p.inWidth + iw]} *
                       w[((int64_t{m} * perGroupIn + c) * p.kernelHeight + kh) * p.kernelWidth + kw];
              }
          y[i] = sum;
        }
  return y;
}

}  // namespace convscope::testing
