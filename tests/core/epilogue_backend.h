// A conv backend that applies a fused epilogue, for tests that need a variant which fuses without
// a GPU: the convolution, bias, activation and pooling written from their definitions (double
// sums), independently of the operators' own code.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "tests/core/direct_convolution.h"

namespace convscope::testing {

// Each fusable activation (app/core/util/activations.h) from its definition, in double precision,
// written here apart from the product's formulas. A new row of that list needs its case here: the
// compiler warns at this switch (-Wswitch), and a test that reaches the throw fails.
inline double referenceActivation(Activation activation, double v) {
  switch (activation) {
    case Activation::Relu:
      return std::max(v, 0.0);
    case Activation::Tanh:
      return std::tanh(v);
    case Activation::Sigmoid:
      return 1.0 / (1.0 + std::exp(-v));
    case Activation::HardSwish:  // ONNX: x * max(0, min(1, x/6 + 1/2))
      return v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5));
    case Activation::Clip:  // the row is ReLU6: ONNX's Clip with min 0 and max 6
      return std::min(6.0, std::max(0.0, v));
  }
  throw std::logic_error(std::string("no reference for the activation ") + onnxTypeOf(activation));
}

class EpilogueBackend final : public ConvBackend {
 public:
  void forward(const ConvProblem& p, const float* x, const float* w, float* y) override {
    const std::vector<double> conv = directConvolution(p, x, w);
    std::transform(conv.begin(), conv.end(), y, [](double v) { return static_cast<float>(v); });
  }

  void forwardFused(const ConvProblem& p, const float* x, const float* w, float* y, const ConvEpilogue& e) override {
    ++fusedCalls;
    std::vector<double> value = directConvolution(p, x, w, e.bias);
    if (e.hasActivation)
      for (double& v : value) v = referenceActivation(e.activation, v);
    if (!e.hasPool) {
      std::transform(value.begin(), value.end(), y, [](double v) { return static_cast<float>(v); });
      return;
    }
    const PoolGeometry& g = e.pool;
    for (int64_t plane = 0; plane < g.planes; ++plane)
      for (int oy = 0; oy < g.outHeight; ++oy)
        for (int ox = 0; ox < g.outWidth; ++ox) {
          double best = -INFINITY, sum = 0.0;
          int inside = 0, padded = 0;
          for (int ky = 0; ky < g.kernelHeight; ++ky)
            for (int kx = 0; kx < g.kernelWidth; ++kx) {
              const int iy = oy * g.strideHeight - g.padTop + ky;
              const int ix = ox * g.strideWidth - g.padLeft + kx;
              if (iy < g.inHeight + g.padBottom && ix < g.inWidth + g.padRight) ++padded;
              if (iy < 0 || ix < 0 || iy >= g.inHeight || ix >= g.inWidth) continue;
              const double v = value[static_cast<size_t>((plane * g.inHeight + iy) * g.inWidth + ix)];
              best = std::max(best, v);
              sum += v;
              ++inside;
            }
          // Average pooling of a window with nothing to count (wholly in the padding) is 0.
          const int count = g.countIncludePad ? padded : inside;
          const double result = e.maxPool ? best : count > 0 ? sum / count : 0.0;
          y[(plane * g.outHeight + oy) * g.outWidth + ox] = static_cast<float>(result);
        }
  }

  static inline int fusedCalls = 0;
};

}  // namespace convscope::testing
