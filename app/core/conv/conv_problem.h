// The one description of a 2-D convolution that every conv backend, CPU or GPU, receives: the
// course's (batch, channels in/out, height, width, kernel size) plus stride and padding, and
// beyond the course the group count and dilation that students' models use (depthwise and grouped
// convolution, dilated convolution). Tensors are NCHW; weights are
// [outChannels][inChannels / group][kernelHeight][kernelWidth]: output channel m reads the input
// channels of its group, g = m / (outChannels / group).
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
  // Channels split into `group` independent convolutions (inChannels and outChannels both divide
  // by it; group == inChannels is a depthwise convolution). 1: the course's convolution.
  int group = 1;
  // Kernel taps `dilation` input pixels apart (1: adjacent, the course's convolution).
  int dilationHeight = 1;
  int dilationWidth = 1;

  // The input rows and columns one kernel window spans.
  int kernelExtentHeight() const { return (kernelHeight - 1) * dilationHeight + 1; }
  int kernelExtentWidth() const { return (kernelWidth - 1) * dilationWidth + 1; }
  int outHeight() const { return (inHeight + padTop + padBottom - kernelExtentHeight()) / strideHeight + 1; }
  int outWidth() const { return (inWidth + padLeft + padRight - kernelExtentWidth()) / strideWidth + 1; }
  bool hasPadding() const { return padTop || padLeft || padBottom || padRight; }
  bool hasStride() const { return strideHeight != 1 || strideWidth != 1; }
  bool isGrouped() const { return group != 1; }
  bool hasDilation() const { return dilationHeight != 1 || dilationWidth != 1; }
  int inChannelsPerGroup() const { return inChannels / group; }
  int outChannelsPerGroup() const { return outChannels / group; }

  int64_t inputElements() const { return int64_t{batch} * inChannels * inHeight * inWidth; }
  int64_t weightElements() const { return int64_t{outChannels} * inChannelsPerGroup() * kernelHeight * kernelWidth; }
  int64_t outputElements() const { return int64_t{batch} * outChannels * outHeight() * outWidth(); }
  // Multiply and add counted as two operations, the usual convention for GFLOP/s.
  int64_t flops() const { return 2 * outputElements() * inChannelsPerGroup() * kernelHeight * kernelWidth; }

  std::string describe() const {
    std::ostringstream out;
    out << "batch " << batch << ", " << inChannels << "x" << inHeight << "x" << inWidth << " -> " << outChannels << "x"
        << outHeight() << "x" << outWidth() << ", kernel " << kernelHeight << "x" << kernelWidth;
    if (hasStride()) out << ", stride " << strideHeight << "x" << strideWidth;
    if (hasPadding()) out << ", pads " << padTop << "," << padLeft << "," << padBottom << "," << padRight;
    if (hasDilation()) out << ", dilation " << dilationHeight << "x" << dilationWidth;
    if (isGrouped()) out << ", " << group << " groups" << (group == inChannels ? " (depthwise)" : "");
    return out.str();
  }
};

}  // namespace convscope
