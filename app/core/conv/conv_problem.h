// The one description of a 2-D convolution that every conv backend, CPU or GPU, receives: the
// course's (batch, channels in/out, height, width, kernel size) plus stride and padding.
// Tensors are NCHW; weights are [outChannels][inChannels][kernelHeight][kernelWidth].
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace convscope {

struct ConvProblem {
  int batch = 1;
  int inChannels = 1;
  int inHeight = 1;
  int inWidth = 1;
  int outChannels = 1;
  int kernelHeight = 1;
  int kernelWidth = 1;
  int strideHeight = 1;
  int strideWidth = 1;
  int padTop = 0;
  int padLeft = 0;
  int padBottom = 0;
  int padRight = 0;

  int outHeight() const { return (inHeight + padTop + padBottom - kernelHeight) / strideHeight + 1; }
  int outWidth() const { return (inWidth + padLeft + padRight - kernelWidth) / strideWidth + 1; }
  bool hasPadding() const { return padTop || padLeft || padBottom || padRight; }
  bool hasStride() const { return strideHeight != 1 || strideWidth != 1; }

  int64_t inputElements() const { return int64_t{batch} * inChannels * inHeight * inWidth; }
  int64_t weightElements() const { return int64_t{outChannels} * inChannels * kernelHeight * kernelWidth; }
  int64_t outputElements() const { return int64_t{batch} * outChannels * outHeight() * outWidth(); }
  // Multiply and add counted as two operations, the usual convention for GFLOP/s.
  int64_t flops() const { return 2 * outputElements() * inChannels * kernelHeight * kernelWidth; }

  std::string describe() const {
    std::ostringstream out;
    out << "batch " << batch << ", " << inChannels << "x" << inHeight << "x" << inWidth << " -> " << outChannels << "x"
        << outHeight() << "x" << outWidth() << ", kernel " << kernelHeight << "x" << kernelWidth;
    if (hasStride()) out << ", stride " << strideHeight << "x" << strideWidth;
    if (hasPadding()) out << ", pads " << padTop << "," << padLeft << "," << padBottom << "," << padRight;
    return out.str();
  }
};

}  // namespace convscope
