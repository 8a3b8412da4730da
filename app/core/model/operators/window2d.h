// The sliding-window geometry shared by Conv, MaxPool and AveragePool: kernel, strides, explicit
// pads or auto_pad, ceil mode. Only 2-D windows with dilation 1 are supported; anything else is
// refused when the model loads.
#pragma once

#include <array>
#include <string>

#include "app/core/model/attributes.h"

namespace convscope::ops {

struct Window2d {
  int kernelHeight = 0;  // 0: taken from the weights (Conv without kernel_shape)
  int kernelWidth = 0;
  int strideHeight = 1;
  int strideWidth = 1;
  std::array<int, 4> pads{0, 0, 0, 0};  // ONNX order: top, left, bottom, right
  std::string autoPad = "NOTSET";
  bool ceilMode = false;

  struct Resolved {
    int padTop, padLeft, padBottom, padRight;
    int outHeight, outWidth;
  };

  // Reads kernel_shape, strides, pads, auto_pad, dilations (and ceil_mode when `allowCeil`).
  static Window2d read(Attributes& attributes, bool kernelRequired, bool allowCeil);

  // Pads and output size for an input of inHeight x inWidth and the given kernel.
  Resolved resolve(int inHeight, int inWidth, int kernelH, int kernelW) const;
};

}  // namespace convscope::ops
