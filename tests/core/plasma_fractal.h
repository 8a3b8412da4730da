// A plasma fractal (the diamond-square algorithm, as ImageMagick's "plasma:fractal" draws it): a
// cloud of every gray level, the walkthrough's picture that course-high called "Trouser 95.5 %".
// A picture unlike any of the data set's, for the tests of the "unlike the data set" hint.
#pragma once

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "app/core/data/picture.h"

namespace convscope {

// `size` is 2^k + 1; values are stretched to [0, 1].
inline Picture plasmaFractal(int size, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> jitter(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(size * size), 0.0f);
  const auto at = [&](int y, int x) -> float& { return v[static_cast<size_t>(y * size + x)]; };
  at(0, 0) = jitter(random), at(0, size - 1) = jitter(random);
  at(size - 1, 0) = jitter(random), at(size - 1, size - 1) = jitter(random);
  float scale = 1.0f;
  for (int step = size - 1; step > 1; step /= 2, scale *= 0.55f) {
    const int half = step / 2;
    for (int y = half; y < size; y += step)
      for (int x = half; x < size; x += step)
        at(y, x) =
            (at(y - half, x - half) + at(y - half, x + half) + at(y + half, x - half) + at(y + half, x + half)) / 4 +
            scale * jitter(random);
    for (int y = 0; y < size; y += half)
      for (int x = (y / half) % 2 == 0 ? half : 0; x < size; x += step) {
        float sum = 0.0f;
        int n = 0;
        for (auto [dy, dx] : {std::pair{-half, 0}, {half, 0}, {0, -half}, {0, half}})
          if (y + dy >= 0 && y + dy < size && x + dx >= 0 && x + dx < size) sum += at(y + dy, x + dx), ++n;
        at(y, x) = sum / n + scale * jitter(random);
      }
  }
  const auto [low, high] = std::minmax_element(v.begin(), v.end());
  const float lo = *low, range = *high - *low;
  for (float& value : v) value = (value - lo) / range;
  return Picture{size, size, v};
}

}  // namespace convscope
