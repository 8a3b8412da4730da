#include "app/core/util/host_softmax.h"

#include <algorithm>
#include <cmath>

namespace convscope {

void softmaxAlongAxis(const float* input, float* output, int64_t outer, int64_t length, int64_t inner) {
  // A few rows (one image's ten classes) stay on this thread: waking the others costs more.
#pragma omp parallel for schedule(static) if (outer * length * inner > 16384)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* src = input + o * length * inner + i;
      float* dst = output + o * length * inner + i;
      float peak = -INFINITY;
      for (int64_t j = 0; j < length; ++j) peak = std::max(peak, src[j * inner]);
      float sum = 0.0f;
      for (int64_t j = 0; j < length; ++j) sum += dst[j * inner] = std::exp(src[j * inner] - peak);
      for (int64_t j = 0; j < length; ++j) dst[j * inner] /= sum;
    }
}

}  // namespace convscope
