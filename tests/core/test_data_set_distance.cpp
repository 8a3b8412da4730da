// The "unlike the data set" measure (data_set_distance.h): the distance to the nearest reference
// image, computed here independently in double, and its share among the yardstick's; on the real
// test set, its own pictures fall in the middle and plasma fractals and noise far outside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "app/core/data/data_set_distance.h"
#include "app/core/data/image_set.h"
#include "app/core/util/error.h"
#include "tests/core/plasma_fractal.h"

namespace convscope {
namespace {

TEST(DataSetDistance, IsTheRmsDifferenceToTheNearestReferenceImageToldAsAShare) {
  // Twenty 3x5 images (no tile of anything divides it) with negatives and values above one: the
  // measure does not clamp. A fifth (4) is the yardstick, the first 16 the reference.
  std::mt19937 random(3);
  std::normal_distribution<float> value(0.4f, 0.5f);
  const int count = 20, height = 3, width = 5, size = height * width;
  std::vector<float> pixels(static_cast<size_t>(count * size));
  for (float& v : pixels) v = value(random);
  std::vector<int> labels;
  for (int i = 0; i < count; ++i) labels.push_back(i % 3);
  const ImageSet set("synthetic", height, width, pixels, labels, {"a", "b", "c"});
  const DataSetDistance distance(set);
  ASSERT_EQ(distance.referenceSize(), 16);
  ASSERT_EQ(distance.yardstickSize(), 4);

  // Brute force, in double: the nearest of images 0..15.
  const auto expected = [&](const float* picture, int* label) {
    double best = 1e300;
    for (int r = 0; r < 16; ++r) {
      double squares = 0.0;
      for (int p = 0; p < size; ++p) {
        const double d = static_cast<double>(picture[p]) - pixels[static_cast<size_t>(r * size + p)];
        squares += d * d;
      }
      if (squares < best) best = squares, *label = labels[static_cast<size_t>(r)];
    }
    return std::sqrt(best / size);
  };
  std::vector<double> yardstick;
  int label = -1;
  for (int i = 16; i < 20; ++i) yardstick.push_back(expected(&pixels[static_cast<size_t>(i * size)], &label));
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> picture(static_cast<size_t>(size));
    for (float& v : picture) v = value(random) * (trial % 2 ? 1.0f : 3.0f);
    const double want = expected(picture.data(), &label);
    const DataSetDistance::Result got = distance.of(Picture{height, width, picture});
    EXPECT_NEAR(got.distance, want, 1e-5);
    EXPECT_EQ(got.nearestLabel, label);
    int closer = 0;
    for (double d : yardstick) closer += d < want;
    EXPECT_DOUBLE_EQ(got.shareCloser, closer / 4.0);
  }
  // A reference image itself is at distance 0, nearer than all.
  const DataSetDistance::Result own = distance.of(set.image(5));
  EXPECT_EQ(own.distance, 0.0);
  EXPECT_EQ(own.shareCloser, 0.0);
  EXPECT_EQ(own.nearestLabel, labels[5]);

  // A picture of another size is resized to the set's first (as every input is), not refused.
  const Picture big{6, 10, std::vector<float>(60, 0.25f)};
  const Picture sized = resizedToFit(big, height, width);
  EXPECT_NEAR(distance.of(big).distance, expected(sized.pixels.data(), &label), 1e-6);

  EXPECT_THROW(DataSetDistance(ImageSet("one", 3, 5, std::vector<float>(15, 0.0f), {0}, {"a"})), Error);
}

TEST(DataSetDistance, TheTestSetsOwnPicturesAreTypicalAndPlasmaAndNoiseAreNot) {
  const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  ASSERT_GE(set.count(), 4000);
  const DataSetDistance distance(set);
  ASSERT_EQ(distance.referenceSize(), DataSetDistance::kReferenceImages);
  ASSERT_EQ(distance.yardstickSize(), DataSetDistance::kYardstickImages);
  // Images neither part used fall across the yardstick: about half farther than its median, about
  // one in twenty "far out", about one in a hundred "unlike" (what the shares mean).
  int unusual = 0, unlike = 0;
  double shares = 0.0;
  for (int i = 3000; i < 4000; ++i) {
    const DataSetDistance::Result r = distance.of(set.image(i));
    shares += r.shareCloser;
    unusual += r.unusual();
    unlike += r.unlike();
  }
  EXPECT_NEAR(shares / 1000.0, 0.5, 0.06);
  EXPECT_LT(unusual, 100);
  EXPECT_LT(unlike, 30);
  // Uniform noise and a white page: unlike any garment.
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Picture noise{28, 28, std::vector<float>(784)};
  for (float& v : noise.pixels) v = uniform(random);
  EXPECT_TRUE(distance.of(noise).unlike());
  EXPECT_TRUE(distance.of(Picture{28, 28, std::vector<float>(784, 1.0f)}).unlike());
  // Plasma fractals: every one far out, most of them unlike the data set.
  int plasmaUnlike = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const DataSetDistance::Result r = distance.of(plasmaFractal(seed % 2 ? 65 : 129, seed));
    EXPECT_TRUE(r.unusual()) << "seed " << seed << ": " << r.shareCloser;
    plasmaUnlike += r.unlike();
  }
  EXPECT_GE(plasmaUnlike, 14);
}

}  // namespace
}  // namespace convscope
