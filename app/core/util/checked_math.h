// 64-bit arithmetic on shapes, sizes and FLOP counts that refuses to wrap around: a model file
// can declare dimensions whose product no int64 holds, and a wrapped product is a wrong answer
// (a [1x0] shape, 0 FLOPs) or undefined behaviour. `what` names the quantity in the message.
#pragma once

#include <cstdint>
#include <string>

#include "app/core/util/error.h"

namespace convscope {

inline int64_t checkedMul(int64_t a, int64_t b, const std::string& what) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result))
    throw Error(what + " overflows 64-bit arithmetic (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  return result;
}

inline int64_t checkedAdd(int64_t a, int64_t b, const std::string& what) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result))
    throw Error(what + " overflows 64-bit arithmetic (" + std::to_string(a) + " + " + std::to_string(b) + ")");
  return result;
}

// For estimates that are compared with a limit: the result sticks at INT64_MAX instead of
// wrapping, which is still "too large" (operands must not be negative).
inline int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t result = 0;
  return __builtin_mul_overflow(a, b, &result) ? INT64_MAX : result;
}

inline int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t result = 0;
  return __builtin_add_overflow(a, b, &result) ? INT64_MAX : result;
}

// `value` rounded up to a multiple of `multiple` (> 0): allocation units, aligned buffer sizes.
// For sizes the caller has already bounded (shared-memory layouts, register counts).
inline int roundUp(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace convscope
