// TF32 as the tensor cores' cvt.rna.tf32.f32 makes it: an FP32 value rounded to 10 mantissa bits
// (11 significant), ties away from zero. Two TF32 values multiply exactly in FP32 (22 significant
// bits), so a TF32 kernel given pre-rounded data must agree with the double-precision formula as
// closely as an FP32 kernel does: that checks its indexing and sums to FP32 tolerance, which the
// loose tolerance of TF32 on raw data could not.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace convscope::testing {

inline float roundToTf32(float value) {
  if (!std::isfinite(value)) return value;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits = (bits + 0x1000u) & ~0x1FFFu;  // half of the dropped 13 bits added to the magnitude: ties away
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

inline std::vector<float> roundedToTf32(std::vector<float> values) {
  for (float& v : values) v = roundToTf32(v);
  return values;
}

}  // namespace convscope::testing
