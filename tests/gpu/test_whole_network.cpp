// Step 13, the whole network in one kernel, against the CPU reference engine: odd built chains
// (padding, strides, every activation, both poolings, layers without bias), the shipped models
// from floats and from 8-bit images, and networks it must decline with the reason. PyTorch's
// 10,000 predictions for every shipped model are checked by test_gpu_engine, which runs every GPU
// row. Skips, saying why, where no GPU can be used.
#include <gtest/gtest.h>

#include <cmath>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/plan.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/chain_models.h"

namespace convscope {
namespace {

const std::string kModels = CONVSCOPE_MODELS_DIR;
constexpr const char* kWholeNetwork = "gpu-whole-network";

class WholeNetwork : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string reason = findConvVariant(kWholeNetwork).unavailableReason(); !reason.empty())
      GTEST_SKIP() << kWholeNetwork << " cannot run here: " << reason;
  }
};

Tensor randomImages(const Shape& shape, unsigned seed) {
  const std::vector<float> values = testing::randomValues(static_cast<size_t>(elementCount(shape)), seed, 1.5f);
  Tensor t(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

// Relative to the largest probability: FP32 sums in another order than the reference's.
void expectClose(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << "element " << i;
    EXPECT_NEAR(got[i], want[i], 2e-6) << "element " << i;
  }
}

TEST_F(WholeNetwork, AnOddChainEqualsTheReferenceForEveryBatchSize) {
  const auto model = testing::oddChainModel();
  Engine whole(model, kWholeNetwork);
  Engine reference(model, "cpu-reference");
  ASSERT_TRUE(whole.plan(5).stages.front().wholeNetwork) << whole.plan(5).wholeNetworkDeclined;
  // 1, 3 and 7 images: a block's four slots partly filled, and a second block.
  for (const int batch : {1, 3, 7, 61}) {
    SCOPED_TRACE(batch);
    const Tensor images = randomImages({batch, 1, 13, 17}, 100u + static_cast<unsigned>(batch));
    const InferenceResult got = whole.infer(images);
    expectClose(got.probabilities, reference.infer(images).probabilities);
    ASSERT_EQ(got.convTimes.size(), 1u) << "one kernel, one time";
    EXPECT_GT(got.convTimes[0].seconds, 0.0);
    EXPECT_EQ(got.convTimes[0].fusedNodes.size(), model->nodes.size() - 1);
  }
}

TEST_F(WholeNetwork, TheShippedModelsFromFloatsAndFromBytesEqualTheReference) {
  const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  for (const std::string name : {"course-high", "course-low", "lenet5"}) {
    SCOPED_TRACE(name);
    const auto model = loadOnnxModel(kModels + "/" + name + ".onnx");
    Engine whole(model, kWholeNetwork);
    Engine reference(model, "cpu-reference");
    const Tensor batch = set.batch(0, 257, model->inputHeight(), model->inputWidth());
    const Tensor want = reference.infer(batch).probabilities;
    expectClose(whole.infer(batch).probabilities, want);
    // The kernel resizes the 8-bit images as it reads them: the same input bits, the same result.
    const InferenceResult bytes = whole.inferBytes({set.bytes(0), 257, set.height(), set.width()});
    expectClose(bytes.probabilities, want);
    EXPECT_EQ(bytes.convTimes.size(), 1u);
  }
}

TEST_F(WholeNetwork, ANetworkTooLargeForSharedMemoryIsDeclinedWithTheFigures) {
  // 64 channels of 60 x 60 maps: 900 KB of one image's maps, more than any block's shared memory.
  testing::ModelBuilder b;
  b.input("x", {-1, 1, 62, 62}).output("y", {-1, 2});
  b.floats("W", {64, 1, 3, 3}, testing::randomValues(576, 5, 0.5f));
  b.floats("D", {2, 64 * 60 * 60}, testing::randomValues(2 * 64 * 3600, 6, 0.01f));
  b.node("Conv", {"x", "W"}, {"c"}, "conv");
  b.node("Flatten", {"c"}, {"f"}, "flatten");
  testing::setInt(b.node("Gemm", {"f", "D"}, {"y"}, "dense"), "transB", 1);
  const auto model = b.load("large.onnx");
  Engine whole(model, kWholeNetwork);
  const Plan plan = whole.plan(2);
  EXPECT_FALSE(plan.stages.front().wholeNetwork);
  EXPECT_NE(plan.wholeNetworkDeclined.find("shared memory"), std::string::npos) << plan.wholeNetworkDeclined;
  // The layers still run, on the earlier steps the plan names.
  Engine reference(model, "cpu-reference");
  const Tensor images = randomImages({2, 1, 62, 62}, 9);
  const InferenceResult got = whole.infer(images);
  const InferenceResult want = reference.infer(images);
  for (int64_t i = 0; i < got.probabilities.size(); ++i) EXPECT_NEAR(got.probabilities[i], want.probabilities[i], 1e-4);
}

}  // namespace
}  // namespace convscope
