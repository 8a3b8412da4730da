// The sliding-window geometry shared by Conv, MaxPool and AveragePool: kernel, strides, explicit
// pads or auto_pad, ceil mode, and (Conv only) dilation. Only 2-D windows are supported, and
// dilated pooling windows are not; anything else is refused when the model loads.
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
  int dilationHeight = 1;
  int dilationWidth = 1;
  std::array<int, 4> pads{0, 0, 0, 0};  // ONNX order: top, left, bottom, right
  std::string autoPad = "NOTSET";
  bool ceilMode = false;

  struct Resolved {
    int padTop, padLeft, padBottom, padRight;
    int outHeight, outWidth;
  };

  // Reads kernel_shape, strides, pads, auto_pad, dilations (and ceil_mode when `allowCeil`);
  // dilations other than 1 only when `allowDilation`.
  static Window2d read(Attributes& attributes, bool kernelRequired, bool allowCeil, bool allowDilation = false);

  // Pads and output size for an input of inHeight x inWidth and the given kernel (for a dilated
  // kernel: the rows and columns it spans).
  Resolved resolve(int inHeight, int inWidth, int kernelH, int kernelW) const;
};

}  // namespace convscope::ops
