// The arithmetic behind one pixel of a conv layer's output, term by term: for every input
// channel the window of the input the kernel covers (zero where it hangs over the padding), the
// kernel's weights, their products and the channel's sum; then the total plus the bias. All of it
// in double, from the layer's input and the model's weights alone, so that the GUI's arithmetic
// view is an independent check of the value the engine computed for that pixel.
#pragma once

#include <string>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/engine/engine.h"
#include "app/core/model/model.h"

namespace convscope {

struct ConvPixelBreakdown {
  std::string node;  // the Conv node
  ConvProblem problem;
  int outChannel = 0;
  int y = 0;
  int x = 0;
  // [inChannels][kernelHeight][kernelWidth], row-major, like the weights of one filter.
  std::vector<double> inputs;  // 0 where the window covers padding
  std::vector<bool> padding;   // true where the window covers padding
  std::vector<double> weights;
  std::vector<double> products;     // inputs * weights
  std::vector<double> channelSums;  // per input channel, the sum of its products
  double productSum = 0.0;
  bool hasBias = false;
  double bias = 0.0;
  double result() const { return productSum + bias; }

  int termIndex(int channel, int ky, int kx) const {
    return (channel * problem.kernelHeight + ky) * problem.kernelWidth + kx;
  }
  // The input row and column a kernel cell covers (outside the input where it is padding).
  int inputRow(int ky) const { return y * problem.strideHeight - problem.padTop + ky; }
  int inputColumn(int kx) const { return x * problem.strideWidth - problem.padLeft + kx; }
};

// The indices (into model.nodes) of the Conv nodes, in execution order.
std::vector<int> convNodeIndices(const Model& model);

// The convolutions of `model` for one image, in execution order (what a student's kernel is
// checked on beside its random shapes: conv_check.h). Throws convscope::Error as inferShapes and
// convProblemOf do.
std::vector<ConvProblem> modelConvProblems(const Model& model);

// The convolution `conv` performs on an input of `inputShape` (N x C x H x W). Throws
// convscope::Error naming the node when its weights are not initializers of the model.
ConvProblem convProblemOf(const Model& model, const Node& conv, const Shape& inputShape);

// Among layers captured by Engine::infer (the input first, then every node), the value the node
// `conv` reads as its input; nullptr when it was not captured.
const Tensor* capturedInputOf(const Model& model, const Node& conv, const std::vector<LayerOutput>& layers);

// The arithmetic of output pixel (outChannel, y, x) of `conv` for image 0 of `input`. Throws
// convscope::Error naming the node and the figures when the pixel is outside the output.
ConvPixelBreakdown explainConvPixel(const Model& model, const Node& conv, const Tensor& input, int outChannel, int y,
                                    int x);

}  // namespace convscope
