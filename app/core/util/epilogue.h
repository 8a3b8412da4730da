// What may follow a convolution in one pass: an activation and a 2-D pooling window. Plain data,
// below everything that uses it: the host arithmetic (host_epilogue.h), the Device interface
// (device/device.h) and the operators all name the same kinds. The activations are listed in
// activations.h.
#pragma once

#include <cstdint>

#include "app/core/util/activations.h"

namespace convscope {

struct PoolGeometry {
  int64_t planes = 0;  // images x channels
  int inHeight = 0, inWidth = 0, outHeight = 0, outWidth = 0;
  int kernelHeight = 0, kernelWidth = 0, strideHeight = 1, strideWidth = 1;
  int padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  bool countIncludePad = false;  // average pooling only
};

}  // namespace convscope
