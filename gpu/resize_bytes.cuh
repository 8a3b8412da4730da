// One pixel of an 8-bit image resized to the model's input on the GPU, with the host's arithmetic
// (resizeBilinearHalfPixel over x / 255, taps from bilinearTaps): the same operations in the same
// order, and __fmul_rn/__fadd_rn so that nvcc does not contract them into fused multiply-adds,
// which round once where the host rounds twice. Shared by the resize kernel of the end-to-end path
// and the whole-network kernel, which resizes as it reads.
#pragma once

#include <cstdint>

#include "app/core/data/picture.h"

namespace convscope::gpu {

__device__ inline float bytePixel(const uint8_t* image, int width, int y, int x) {
  return __fdiv_rn(static_cast<float>(image[y * width + x]), 255.0f);
}

// Output pixel (y, x) of `image` (height x width bytes) resized through `rowTaps`/`colTaps`;
// `sameSize`: no resize, the pixel itself.
__device__ inline float resizedBytePixel(const uint8_t* image, int width, const BilinearTap* rowTaps,
                                         const BilinearTap* colTaps, bool sameSize, int y, int x) {
  if (sameSize) return bytePixel(image, width, y, x);
  const BilinearTap r = rowTaps[y];
  const BilinearTap c = colTaps[x];
  const float top = __fadd_rn(__fmul_rn(c.lowWeight, bytePixel(image, width, r.low, c.low)),
                              __fmul_rn(c.highWeight, bytePixel(image, width, r.low, c.high)));
  const float bottom = __fadd_rn(__fmul_rn(c.lowWeight, bytePixel(image, width, r.high, c.low)),
                                 __fmul_rn(c.highWeight, bytePixel(image, width, r.high, c.high)));
  return __fadd_rn(__fmul_rn(r.lowWeight, top), __fmul_rn(r.highWeight, bottom));
}

}  // namespace convscope::gpu
