// Why this class: the class activation map is the model's own arithmetic (its mean plus the bias
// is the logit the classifier computed), position by position the weighted sum of the last maps;
// occlusion sensitivity equals classifying each occluded picture on its own, whatever the batches.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/class_evidence.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "tests/core/model_builder.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::ModelBuilder;

std::vector<float> randomValues(size_t count, unsigned seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> value(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = value(random);
  return values;
}

// input 1x3x9x11 -> Conv 4 filters 3x3 (pad 1) -> Relu -> GlobalAveragePool -> Flatten -> Gemm
// (5 classes) -> Softmax: the shape of EfficientNet's end on an odd little picture. With
// `transposed` the Gemm's weights are [classes][features] (PyTorch's Linear), else [features][classes].
std::shared_ptr<const Model> pooledClassifier(bool transposed, bool reluAfterPooling = false) {
  ModelBuilder b;
  b.input("x", {-1, 3, 9, 11});
  b.floats("w", {4, 3, 3, 3}, randomValues(108, 1));
  b.floats("b", {4}, randomValues(4, 2));
  onnx::NodeProto& conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  testing::setInts(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  std::string pooled = "p";
  if (reluAfterPooling) {
    b.node("Relu", {"p"}, {"pr"}, "relu_after_pool");
    pooled = "pr";
  }
  b.node("Flatten", {pooled}, {"f"}, "flatten");
  b.floats("fc_w", transposed ? Shape{5, 4} : Shape{4, 5}, randomValues(20, 3, -2.0f, 2.0f));
  b.floats("fc_b", {5}, randomValues(5, 4));
  onnx::NodeProto& gemm = b.node("Gemm", {"f", "fc_w", "fc_b"}, {"logits"}, "fc");
  testing::setInt(gemm, "transB", transposed ? 1 : 0);
  b.node("Softmax", {"logits"}, {"y"}, "softmax");
  b.output("y", {-1, 5});
  return b.load("pooled-classifier.onnx");
}

const Tensor& captured(const std::vector<LayerOutput>& layers, const std::string& node) {
  for (const LayerOutput& layer : layers)
    if (layer.node == node) return layer.value;
  throw Error("not captured: " + node);
}

TEST(ClassActivationMap, IsTheClassifiersOwnSumAtEveryPositionForBothWeightLayouts) {
  for (const bool transposed : {true, false}) {
    SCOPED_TRACE(transposed ? "W [classes][features]" : "W [features][classes]");
    const auto model = pooledClassifier(transposed);
    std::string whyNot;
    const std::optional<ActivationMapHead> head = findActivationMapHead(*model, &whyNot);
    ASSERT_TRUE(head) << whyNot;
    EXPECT_EQ(head->featureNode, "relu");
    EXPECT_EQ(head->denseNode, "fc");
    EXPECT_EQ(head->features, 4);
    EXPECT_EQ(head->classes, 5);

    Engine engine(model, "cpu-reference");
    const std::vector<float> pixels = randomValues(2 * 3 * 9 * 11, 5, -3.0f, 3.0f);  // negatives and outliers
    const InferenceResult result = engine.infer(Tensor({2, 3, 9, 11}, pixels), true);
    const Tensor& features = headFeatures(*head, result.layers);
    const Tensor& logits = captured(result.layers, "fc");
    const Tensor& w = model->weights.at("fc_w");
    for (int image = 0; image < 2; ++image)
      for (int c = 0; c < 5; ++c) {
        const ActivationMap map = classActivationMap(*model, *head, features, image, c);
        ASSERT_EQ(map.height, 9);
        ASSERT_EQ(map.width, 11);
        // The logit, from the map: what the Gemm computed.
        EXPECT_NEAR(map.logit, logits.data()[image * 5 + c], 1e-5) << "image " << image << " class " << c;
        // Each position: the class's weights over the four maps there, in double.
        for (int y = 0; y < 9; ++y)
          for (int x = 0; x < 11; ++x) {
            double expected = 0.0;
            for (int k = 0; k < 4; ++k)
              expected += double{transposed ? w.data()[c * 4 + k] : w.data()[k * 5 + c]} *
                          features.data()[((image * 4 + k) * 9 + y) * 11 + x];
            EXPECT_NEAR(map.values[static_cast<size_t>(y * 11 + x)], expected, 1e-5) << y << "," << x;
          }
      }
  }
}

TEST(ClassActivationMap, ModelsWithoutThePoolingAndOneLinearLayerSayWhy) {
  std::string whyNot;
  EXPECT_FALSE(findActivationMapHead(*loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/lenet5.onnx"), &whyNot));
  EXPECT_NE(whyNot.find("no global average pooling"), std::string::npos) << whyNot;
  EXPECT_FALSE(findActivationMapHead(*pooledClassifier(true, true), &whyNot));
  EXPECT_NE(whyNot.find("Relu 'relu_after_pool'"), std::string::npos) << whyNot;
}

TEST(ClassActivationMap, BadRequestsNameTheClassOrTheImage) {
  const auto model = pooledClassifier(true);
  const ActivationMapHead head = *findActivationMapHead(*model);
  Engine engine(model, "cpu-reference");
  const InferenceResult result = engine.infer(Tensor({1, 3, 9, 11}, randomValues(297, 6)), true);
  const Tensor& features = headFeatures(head, result.layers);
  testing::expectError([&] { classActivationMap(*model, head, features, 0, 5); }, {"class 5", "5 classes"});
  testing::expectError([&] { classActivationMap(*model, head, features, 1, 0); }, {"image 1", "batch of 1"});
  testing::expectError(
      [&] {
        headFeatures(head, engine.infer(Tensor({1, 3, 9, 11}, 0.5f)).layers);
      },
      {"'relu'", "captured"});
}

TEST(Occlusion, PatchesReachEveryEdge) {
  EXPECT_EQ(patchStarts(28, 5, 3), (std::vector<int>{0, 3, 6, 9, 12, 15, 18, 21, 23}));
  EXPECT_EQ(patchStarts(10, 4, 3), (std::vector<int>{0, 3, 6}));
  EXPECT_EQ(patchStarts(28, 28, 1), (std::vector<int>{0}));
  EXPECT_EQ(patchStarts(7, 1, 7), (std::vector<int>{0, 6}));
  testing::expectError([] { patchStarts(28, 29, 1); }, {"29 pixels", "side of 28"});
  testing::expectError([] { patchStarts(28, 4, 0); }, {"stride is 0"});
  EXPECT_EQ(defaultPatch(224, 224), 32);
  EXPECT_EQ(defaultPatch(28, 28), 4);
  EXPECT_EQ(defaultPatch(3, 5), 1);
}

// Each position's drop, computed apart: the picture with the patch painted by these loops,
// classified alone.
float dropComputedAlone(Engine& engine, const Tensor& input, const OcclusionMap& map, int row, int column, float fill,
                        float baseline) {
  Tensor occluded = input;
  const int height = static_cast<int>(input.dim(2)), width = static_cast<int>(input.dim(3));
  for (int c = 0; c < input.dim(1); ++c)
    for (int y = 0; y < map.patch; ++y)
      for (int x = 0; x < map.patch; ++x)
        occluded.data()[(c * height + map.rowStarts[row] + y) * width + map.columnStarts[column] + x] = fill;
  return baseline - engine.infer(occluded).probabilities.data()[map.classIndex];
}

TEST(Occlusion, EveryPositionEqualsItsPictureClassifiedAloneInBatchesThatDoNotDivideThem) {
  const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/lenet5.onnx");
  Engine engine(model, "cpu-reference");
  const int h = model->inputHeight(), w = model->inputWidth();
  const Tensor input({1, 1, h, w}, randomValues(static_cast<size_t>(h * w), 7, 0.0f, 1.0f));
  OcclusionRequest request;
  request.patch = 5;
  request.stride = 3;
  request.batch = 7;
  int calls = 0;
  const OcclusionMap map = occlusionSensitivity(engine, input, request, [&](int done, int total) {
    ++calls;
    EXPECT_LE(done, total);
    return true;
  });
  const std::vector<int> starts = patchStarts(h, 5, 3);
  ASSERT_EQ(map.rowStarts, starts);
  const int positions = static_cast<int>(starts.size() * patchStarts(w, 5, 3).size());
  EXPECT_EQ(map.pictures, positions);
  EXPECT_EQ(static_cast<int>(map.batches.size()), (positions + 6) / 7);
  EXPECT_EQ(map.batches.back(), positions % 7 == 0 ? 7 : positions % 7);
  EXPECT_EQ(calls, static_cast<int>(map.batches.size()));
  EXPECT_FALSE(map.cancelled);
  EXPECT_EQ(map.deviceName, "CPU");

  const InferenceResult alone = engine.infer(input);
  const float* p = alone.probabilities.data();
  const int top = static_cast<int>(std::max_element(p, p + alone.probabilities.dim(1)) - p);
  EXPECT_EQ(map.classIndex, top);
  EXPECT_FLOAT_EQ(map.baseline, p[top]);
  const float fill = 0.5f;  // grey, and the lenet5 model takes the picture's values as they are
  double largest = 0.0;
  for (int r = 0; r < static_cast<int>(map.rowStarts.size()); ++r)
    for (int c = 0; c < static_cast<int>(map.columnStarts.size()); ++c) {
      const float expected = dropComputedAlone(engine, input, map, r, c, fill, map.baseline);
      EXPECT_NEAR(map.dropAt(r, c), expected, 1e-5)
          << "patch at row " << map.rowStarts[r] << ", column " << map.columnStarts[c];
      largest = std::max(largest, std::abs(double{expected}));
    }
  EXPECT_GT(largest, 1e-3) << "no patch changed the probability: the check would pass on anything";

  // A pixel's heat: the mean drop of the patches covering it, counted here from the positions.
  for (const auto& [y, x] : std::vector<std::pair<int, int>>{{0, 0}, {4, 5}, {h - 1, w - 1}, {13, 22}}) {
    double sum = 0.0;
    int covering = 0;
    for (size_t r = 0; r < map.rowStarts.size(); ++r)
      for (size_t c = 0; c < map.columnStarts.size(); ++c)
        if (y >= map.rowStarts[r] && y < map.rowStarts[r] + 5 && x >= map.columnStarts[c] &&
            x < map.columnStarts[c] + 5) {
          sum += map.dropAt(r, c);
          ++covering;
        }
    ASSERT_GT(covering, 0);
    EXPECT_NEAR(map.pixelDrop[static_cast<size_t>(y * w + x)], sum / covering, 1e-6) << y << "," << x;
  }
}

TEST(Occlusion, ACancelKeepsTheBatchesDoneAndMarksTheRestUnknown) {
  const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/lenet5.onnx");
  Engine engine(model, "cpu-reference");
  const int h = model->inputHeight(), w = model->inputWidth();
  const Tensor input({1, 1, h, w}, randomValues(static_cast<size_t>(h * w), 8, 0.0f, 1.0f));
  OcclusionRequest request;
  request.patch = 4;
  request.stride = 4;
  request.batch = 5;
  const OcclusionMap map = occlusionSensitivity(engine, input, request, [](int, int) { return false; });
  EXPECT_TRUE(map.cancelled);
  ASSERT_EQ(map.batches, std::vector<int>{5});
  for (size_t i = 0; i < map.drop.size(); ++i) EXPECT_EQ(std::isnan(map.drop[i]), i >= 5) << i;
  EXPECT_FALSE(std::isnan(map.pixelDrop[0]));                              // under the first patch
  EXPECT_TRUE(std::isnan(map.pixelDrop[static_cast<size_t>(h * w - 1)]));  // no patch ran there
  EXPECT_NE(describeOcclusionRun(map).find("5 pictures in 1 batch of 5"), std::string::npos)
      << describeOcclusionRun(map);
}

TEST(Occlusion, BadRequestsAreRefusedNamingTheProblem) {
  const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/lenet5.onnx");
  Engine engine(model, "cpu-reference");
  const int h = model->inputHeight(), w = model->inputWidth();
  const Tensor input({1, 1, h, w}, 0.25f);
  OcclusionRequest request;
  request.classIndex = 10;
  testing::expectError([&] { occlusionSensitivity(engine, input, request); }, {"class 10", "10 classes"});
  request = {};
  request.patch = h + 1;
  testing::expectError([&] { occlusionSensitivity(engine, input, request); },
                       {std::to_string(h + 1) + " pixels", "side of " + std::to_string(h)});
  request = {};
  request.stride = -2;
  testing::expectError([&] { occlusionSensitivity(engine, input, request); }, {"must be positive"});
  testing::expectError([&] { occlusionSensitivity(engine, Tensor({2, 1, h, w}), {}); }, {"not the model's input"});
}

// On every GPU variant the map is the CPU reference's: the same pictures, batched on the device.
TEST(Occlusion, EveryGpuVariantGivesTheReferenceMap) {
  const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/course-high.onnx");
  const int h = model->inputHeight(), w = model->inputWidth();
  const Tensor input({1, 1, h, w}, randomValues(static_cast<size_t>(h * w), 9, 0.0f, 1.0f));
  OcclusionRequest request;
  request.patch = 7;
  request.stride = 5;
  Engine reference(model, "cpu-reference");
  const OcclusionMap expected = occlusionSensitivity(reference, input, request);
  int gpuVariants = 0;
  for (const ConvVariant& variant : convVariants()) {
    if (!variant.runsOnGpu() || !variant.unavailableReason().empty()) continue;
    SCOPED_TRACE(variant.id);
    Engine engine(model, variant.id);
    const OcclusionMap map = occlusionSensitivity(engine, input, request);
    EXPECT_EQ(map.batches.size(), 1u) << "every occluded picture fits one batch on the GPU";
    ASSERT_EQ(map.drop.size(), expected.drop.size());
    for (size_t i = 0; i < map.drop.size(); ++i)
      EXPECT_NEAR(map.drop[i], expected.drop[i], 2e-3) << i;  // TF32 variants' rounding
    ++gpuVariants;
  }
  if (gpuVariants == 0) GPU_TEST_SKIP() << "no GPU variant runs here";
}

// A real network's occlusion on the GPU: EfficientNet-Lite0's 169 occluded pictures in one batch,
// the map the CPU gives (oneDNN there, TF32's rounding allowed), and the time printed beside the device.
TEST(Occlusion, EfficientNetLite0sMapIsOneBatchOnEveryGpuVariant) {
  const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/efficientnet-lite0.onnx");
  const Tensor input({1, 3, 224, 224}, randomValues(3 * 224 * 224, 10, -1.0f, 1.0f));
  OcclusionRequest request;
  request.classIndex = 285;
  std::optional<OcclusionMap> expected;
  int gpuVariants = 0;
  for (const ConvVariant& variant : convVariants()) {
    if (!variant.runsOnGpu() || !variant.unavailableReason().empty()) continue;
    SCOPED_TRACE(variant.id);
    if (!expected) {
      Engine reference(model, "cpu-onednn");
      expected = occlusionSensitivity(reference, input, request);
      std::cout << "cpu-onednn: " << describeOcclusionRun(*expected) << "\n";
    }
    Engine engine(model, variant.id);
    occlusionSensitivity(engine, input, request);  // warm-up: the first batch of a shape plans it
    const OcclusionMap map = occlusionSensitivity(engine, input, request);
    std::cout << variant.id << ": " << describeOcclusionRun(map) << "\n";
    EXPECT_EQ(map.pictures, 169);
    EXPECT_EQ(map.batches, std::vector<int>{169});
    ASSERT_EQ(map.drop.size(), expected->drop.size());
    for (size_t i = 0; i < map.drop.size(); ++i) EXPECT_NEAR(map.drop[i], expected->drop[i], 2e-3) << i;
    ++gpuVariants;
  }
  if (gpuVariants == 0) GPU_TEST_SKIP() << "no GPU variant runs here";
}

}  // namespace
}  // namespace convscope
