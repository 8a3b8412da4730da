#include "app/core/data/data_set_distance.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "app/core/data/image_set.h"
#include "app/core/util/error.h"

namespace convscope {

DataSetDistance::DataSetDistance(const ImageSet& set) : height_(set.height()), width_(set.width()) {
  if (set.count() < 2 || height_ <= 0 || width_ <= 0)
    throw Error(set.source() + ": too few images to measure a picture's distance from (" + std::to_string(set.count()) +
                ")");
  // A small set (a test's) still gets both parts: a fifth of it, at most 500, is the yardstick.
  const int yardstick = std::max(1, std::min(kYardstickImages, set.count() / 5));
  const int reference = std::min(kReferenceImages, set.count() - yardstick);
  const size_t pixels = static_cast<size_t>(height_) * static_cast<size_t>(width_);
  reference_.reserve(static_cast<size_t>(reference) * pixels);
  for (int i = 0; i < reference; ++i) {
    const Picture image = set.image(i);
    reference_.insert(reference_.end(), image.pixels.begin(), image.pixels.end());
    referenceLabels_.push_back(set.hasLabels() ? set.label(i) : -1);
  }
  for (int i = reference; i < reference + yardstick; ++i)
    yardstick_.push_back(std::sqrt(nearest(set.image(i).pixels.data()).first / static_cast<double>(pixels)));
  std::sort(yardstick_.begin(), yardstick_.end());
}

std::pair<double, int> DataSetDistance::nearest(const float* pixels) const {
  const size_t count = static_cast<size_t>(height_) * static_cast<size_t>(width_);
  double best = std::numeric_limits<double>::infinity();
  int bestLabel = -1;
  for (size_t r = 0; r < referenceLabels_.size(); ++r) {
    const float* image = reference_.data() + r * count;
    double squares = 0.0;
    // Rows at a time, leaving as soon as this image cannot be the nearest: most are left early.
    for (size_t p = 0; p < count && squares < best;) {
      const size_t end = std::min(count, p + static_cast<size_t>(width_));
      for (; p < end; ++p) {
        const double d = static_cast<double>(pixels[p]) - image[p];
        squares += d * d;
      }
    }
    if (squares < best) {
      best = squares;
      bestLabel = referenceLabels_[r];
    }
  }
  return {best, bestLabel};
}

DataSetDistance::Result DataSetDistance::of(const Picture& picture) const {
  const Picture sized =
      picture.height == height_ && picture.width == width_ ? picture : resizedToFit(picture, height_, width_);
  const auto [squares, label] = nearest(sized.pixels.data());
  Result result;
  result.distance = std::sqrt(squares / (static_cast<double>(height_) * width_));
  result.nearestLabel = label;
  // The share strictly closer: a picture of the set itself lands where it belongs.
  result.shareCloser = static_cast<double>(std::lower_bound(yardstick_.begin(), yardstick_.end(), result.distance) -
                                           yardstick_.begin()) /
                       static_cast<double>(yardstick_.size());
  return result;
}

}  // namespace convscope
