// The engine on a real shipped model: captured layers for the feature-map view, per-conv op
// times, probabilities, and agreement between the conv backends on the same images.
#include <gtest/gtest.h>

#include <cmath>

#include "app/core/data/image_set.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/engine.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::expectError;

const std::string kModels = CONVSCOPE_MODELS_DIR;

class EngineOnCourseModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = loadOnnxModel(kModels + "/course-high.onnx");
    images_ = new ImageSet(ImageSet::loadIdxFolder(defaultDataFolder()));
  }
  static void TearDownTestSuite() {
    delete images_;
    model_.reset();
  }
  static std::shared_ptr<const Model> model_;
  static ImageSet* images_;
};
std::shared_ptr<const Model> EngineOnCourseModel::model_;
ImageSet* EngineOnCourseModel::images_ = nullptr;

TEST_F(EngineOnCourseModel, CapturesTheInputAndEveryLayerForOneImage) {
  Engine engine(model_, "cpu-reference");
  const InferenceResult result = engine.infer(images_->batch(0, 1, 48, 48), true);
  ASSERT_EQ(result.layers.size(), model_->nodes.size() + 1);
  EXPECT_EQ(result.layers[0].node, "input");
  EXPECT_EQ(result.layers[0].value.shape(), (Shape{1, 1, 48, 48}));
  EXPECT_EQ(result.layers[1].opType, "Conv");
  EXPECT_EQ(result.layers[1].value.shape(), (Shape{1, 12, 42, 42}));
  EXPECT_EQ(result.layers[4].value.shape(), (Shape{1, 24, 15, 15}));
  for (size_t i = 1; i < result.layers.size(); ++i) EXPECT_EQ(result.layers[i].node, model_->nodes[i - 1].name);
}

TEST_F(EngineOnCourseModel, TimesEachConvLayerAndReturnsProbabilities) {
  Engine engine(model_, "cpu-im2col-gemm");
  const InferenceResult result = engine.infer(images_->batch(0, 32, 48, 48));
  ASSERT_EQ(result.convTimes.size(), 2u);
  for (const ConvLayerTime& t : result.convTimes) {
    EXPECT_GT(t.seconds, 0.0);
    EXPECT_EQ(t.variant, "cpu-im2col-gemm");
    EXPECT_TRUE(t.fallbackReason.empty());
    EXPECT_EQ(t.problem.batch, 32);
  }
  EXPECT_EQ(result.convTimes[1].problem.inChannels, 12);
  ASSERT_EQ(result.probabilities.shape(), (Shape{32, 10}));
  for (int r = 0; r < 32; ++r) {
    double sum = 0;
    for (int c = 0; c < 10; ++c) sum += result.probabilities[r * 10 + c];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST_F(EngineOnCourseModel, BackendsAgreeOnPredictionsAndProbabilities) {
  Engine reference(model_, "cpu-reference");
  const ClassificationRun a = classify(reference, *images_, 0, 300, 128);
  ASSERT_EQ(a.images.size(), 300u);
  EXPECT_EQ(a.convTimes.size(), 2u);
  EXPECT_EQ(a.convTimes[0].problem.batch, 300);  // times summed over the chunks cover all images
  // The fast variants run conv -> tanh -> max-pool as one fused stage each.
  for (const char* variant : {"cpu-im2col-gemm", "cpu-onednn"}) {
    SCOPED_TRACE(variant);
    Engine fast(model_, variant);
    const ClassificationRun b = classify(fast, *images_, 0, 300, 300);
    ASSERT_EQ(b.images.size(), 300u);
    for (size_t i = 0; i < 300; ++i) {
      EXPECT_EQ(a.images[i].predicted, b.images[i].predicted) << "image " << i;
      for (size_t c = 0; c < 10; ++c) EXPECT_NEAR(a.images[i].probabilities[c], b.images[i].probabilities[c], 1e-5);
    }
    EXPECT_EQ(a.correct, b.correct);
    ASSERT_EQ(b.convTimes.size(), 2u);
    EXPECT_EQ(b.convTimes[0].fusedNodes, (std::vector<std::string>{"/1/Tanh", "/2/MaxPool"}));
  }
}

TEST_F(EngineOnCourseModel, ClassifyStopsWhenProgressSaysCancel) {
  Engine engine(model_, "cpu-im2col-gemm");
  int calls = 0;
  const ClassificationRun run = classify(engine, *images_, 0, 1000, 100, [&](int done, int total) {
    EXPECT_EQ(total, 1000);
    EXPECT_EQ(done, 100 * (calls + 1));
    return ++calls < 3;
  });
  EXPECT_TRUE(run.cancelled);
  EXPECT_EQ(run.images.size(), 300u);
}

TEST_F(EngineOnCourseModel, RefusesInputOfTheWrongShapeAndBadRanges) {
  Engine engine(model_, "cpu-reference");
  expectError([&] { engine.infer(images_->batch(0, 1, 28, 28)); }, {"course-high.onnx", "input", "[1x1x28x28]"});
  expectError([&] { classify(engine, *images_, 9990, 20); }, {"holds 10000 images"});
  expectError([&] { classify(engine, *images_, 0, 0); }, {"at least 1"});
}

}  // namespace
}  // namespace convscope
