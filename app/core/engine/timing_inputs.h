// The inputs of a fairly timed repetition (fair_timing.h), as one function that the device's
// generator (gpu/fair_timing_harness.cu, before the timed region) and the checker's host code both
// call: the same bits on both sides without the values crossing between the processes. No
// dependency but util/host_device.h, so that the CUDA compiler reads it as it is.
#pragma once

#include <cstdint>

#include "app/core/util/host_device.h"

namespace convscope {

// splitmix64's finaliser: a 64-bit mix whose outputs pass BigCrush, cheap on the device.
CONVSCOPE_HOST_DEVICE uint64_t mixBits(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element `index` of a timed repetition's input (weights: timingWeightSeed) for `seed`: 24 bits of
// a hash as a multiple of 2^-23 in [-1, 1), exact in float. The device generator (ConvScope's, run
// before the timed region) and the checker's host code call this same function, so both hold the
// same bits without the values crossing between the processes.
CONVSCOPE_HOST_DEVICE float timingInputValue(uint64_t seed, uint64_t index) {
  const int64_t bits = static_cast<int64_t>(mixBits(seed ^ mixBits(index)) >> 40);  // 0 .. 2^24 - 1
  return static_cast<float>(bits - (int64_t{1} << 23)) * (1.0f / static_cast<float>(1 << 23));
}
CONVSCOPE_HOST_DEVICE uint64_t timingWeightSeed(uint64_t inputSeed) {
  return mixBits(inputSeed ^ 0x5745494748545321ull);  // "WEIGHTS!": the weights' own stream
}

}  // namespace convscope
