// The end-to-end path on the CPU: 8-bit images as the data set stores them, turned into the
// network's input exactly as the float path turns them (bit for bit), and Engine::inferBytes
// giving exactly infer()'s probabilities. The GPU's side of the same path is tested in
// tests/gpu/test_end_to_end_gpu.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "app/core/data/image_set.h"
#include "app/core/engine/engine.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::string kModels = CONVSCOPE_MODELS_DIR;

const ImageSet& testSet() {
  static const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  return set;
}

bool sameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(ImageBytes, AreTheStoredPixelsOfEveryImage) {
  const ImageSet& set = testSet();
  ASSERT_TRUE(set.hasBytes());
  const uint8_t* bytes = set.bytes(0);
  for (int i = 0; i < set.count(); ++i) {
    const Picture image = set.image(i);
    for (size_t p = 0; p < image.pixels.size(); ++p)
      ASSERT_TRUE(sameBits(image.pixels[p], static_cast<float>(bytes[static_cast<size_t>(i) * 784 + p]) / 255.0f))
          << "image " << i << " pixel " << p;
  }
  EXPECT_EQ(set.bytes(7), bytes + 7 * 784);
}

TEST(ImageBytes, BatchFromBytesEqualsTheFloatBatchBitForBit) {
  const ImageSet& set = testSet();
  for (const auto& [height, width] : std::vector<std::pair<int, int>>{{48, 48}, {28, 28}, {31, 17}, {13, 40}}) {
    SCOPED_TRACE(std::to_string(height) + "x" + std::to_string(width));
    const Tensor expected = set.batch(5, 23, height, width);
    const Tensor got = batchFromBytes(set.bytes(5), 23, set.height(), set.width(), height, width);
    ASSERT_EQ(got.shape(), expected.shape());
    for (int64_t i = 0; i < got.size(); ++i) ASSERT_TRUE(sameBits(got[i], expected[i])) << "element " << i;
  }
}

TEST(ImageBytes, SetsWithoutBytesAndBadBatchesAreRefusedSayingWhy) {
  const ImageSet drawn = ImageSet::fromImages("drawing", {Picture{2, 2, {0.1f, 0.2f, 0.3f, 0.4f}}}, {});
  EXPECT_FALSE(drawn.hasBytes());
  testing::expectError([&] { drawn.bytes(0); }, {"drawing", "8-bit"});
  testing::expectError([&] { testSet().bytes(10000); }, {"10000", "outside"});
  const uint8_t pixel = 3;
  testing::expectError([&] { batchFromBytes(&pixel, 0, 1, 1, 48, 48); }, {"0 of 1x1"});
  testing::expectError([&] { batchFromBytes(nullptr, 1, 1, 1, 48, 48); }, {"cannot form a batch"});
}

TEST(EngineInferBytes, GivesInfersProbabilitiesOnTheCpu) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  for (const std::string variant : {"cpu-reference", "cpu-onednn"}) {
    SCOPED_TRACE(variant);
    Engine engine(model, variant);
    const InferenceResult floats = engine.infer(testSet().batch(100, 9, 48, 48));
    const InferenceResult bytes = engine.inferBytes({testSet().bytes(100), 9, 28, 28});
    EXPECT_FALSE(bytes.replayed);
    ASSERT_EQ(bytes.probabilities.shape(), floats.probabilities.shape());
    for (int64_t i = 0; i < floats.probabilities.size(); ++i)
      ASSERT_TRUE(sameBits(bytes.probabilities[i], floats.probabilities[i])) << "element " << i;
    EXPECT_EQ(engine.pinHostMemory(nullptr, 0), nullptr);  // nothing to lock without a GPU
  }
}

TEST(EngineInferBytes, RefusesAnEmptyBatchSayingWhy) {
  Engine engine(loadOnnxModel(kModels + "/lenet5.onnx"), "cpu-reference");
  testing::expectError([&] { engine.inferBytes({nullptr, 4, 28, 28}); }, {"4 of 28x28", "cannot form a batch"});
  const uint8_t pixels[4] = {};
  testing::expectError([&] { engine.inferBytes({pixels, 0, 2, 2}); }, {"0 of 2x2"});
}

}  // namespace
}  // namespace convscope
