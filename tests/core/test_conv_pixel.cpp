// The arithmetic behind one conv output pixel (conv_pixel.h), as the GUI's Arithmetic tab shows
// it: recomputed in double from the layer's captured input and the model's weights, it must equal
// the value the engine produced at that pixel within 1e-5, for every conv layer, at the corners and
// edges (where the window covers padding) as well as inside, with every FP32 variant that runs
// here. Models: the shipped ones, and one built here with asymmetric padding and a stride on an
// odd-sized input, since the window's position is where an off-by-one would hide.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/conv_pixel.h"
#include "app/core/engine/engine.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/model_builder.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::ModelBuilder;
using testing::setInts;

const std::string kModels = CONVSCOPE_MODELS_DIR;

// x (N x 1 x 13 x 11) -> Conv 3 filters 3x3, pads 2,1,0,2, stride 2x1, bias -> Tanh -> Conv 2
// filters 3x3 pads 1 (its input has 3 channels) -> y.
std::shared_ptr<const Model> paddedModel() {
  ModelBuilder b;
  b.input("x", {-1, 1, 13, 11});
  b.weights("w1", {3, 1, 3, 3});
  b.floats("b1", {3}, {0.25f, -0.5f, 0.125f});
  onnx::NodeProto& conv1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "padded_conv");
  setInts(conv1, "pads", {2, 1, 0, 2});
  setInts(conv1, "strides", {2, 1});
  b.node("Tanh", {"c1"}, {"t1"}, "tanh");
  b.weights("w2", {2, 3, 3, 3});
  b.floats("b2", {2}, {-0.3f, 0.7f});
  onnx::NodeProto& conv2 = b.node("Conv", {"t1", "w2", "b2"}, {"y"}, "second_conv");
  setInts(conv2, "pads", {1, 1, 1, 1});
  b.output("y");
  return b.load("padded.onnx");
}

// A picture with negative values and outliers, so no term is trivially zero or one-signed.
Tensor signedPicture(int height, int width, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Tensor picture({1, 1, height, width});
  for (int64_t i = 0; i < picture.size(); ++i) picture[i] = normal(random);
  picture[3] = 25.0f;
  picture[picture.size() - 2] = -40.0f;
  return picture;
}

// Pixels to check: the four corners, the middle of each edge, the centre and a few at random.
std::vector<std::pair<int, int>> pixelsOf(int height, int width, unsigned seed) {
  std::set<std::pair<int, int>> pixels = {{0, 0},
                                          {0, width - 1},
                                          {height - 1, 0},
                                          {height - 1, width - 1},
                                          {0, width / 2},
                                          {height - 1, width / 2},
                                          {height / 2, 0},
                                          {height / 2, width - 1},
                                          {height / 2, width / 2}};
  std::mt19937 random(seed);
  for (int i = 0; i < 6; ++i)
    pixels.insert({std::uniform_int_distribution<int>(0, height - 1)(random),
                   std::uniform_int_distribution<int>(0, width - 1)(random)});
  return {pixels.begin(), pixels.end()};
}

const LayerOutput& captured(const InferenceResult& result, const std::string& node) {
  for (const LayerOutput& layer : result.layers)
    if (layer.node == node) return layer;
  throw Error("layer " + node + " was not captured");
}

// Every conv layer's output pixels against the double-precision breakdown; returns how many of
// the checked windows covered padding.
int expectBreakdownsMatch(const std::shared_ptr<const Model>& model, const Tensor& picture,
                          const std::string& variant) {
  Engine engine(model, variant);
  InferenceResult result;
  if (model->endsWithSoftmax()) {
    result = engine.infer(picture, /*captureLayers=*/true);
  } else {  // not a classifier: every layer through evaluate(), the input first as infer() puts it
    result.layers.push_back({"input", "Input", picture});
    engine.evaluate({{model->inputs[0].name, picture}}, nullptr, &result.layers);
  }
  int paddedWindows = 0;
  for (int index : convNodeIndices(*model)) {
    const Node& conv = model->nodes[static_cast<size_t>(index)];
    SCOPED_TRACE(model->name + " " + conv.name + " with " + variant);
    const Tensor* input = capturedInputOf(*model, conv, result.layers);
    EXPECT_NE(input, nullptr);
    if (!input) continue;
    const Tensor& output = captured(result, conv.name).value;
    const int channels = static_cast<int>(output.dim(1)), height = static_cast<int>(output.dim(2)),
              width = static_cast<int>(output.dim(3));
    for (int channel : {0, channels / 2, channels - 1})
      for (const auto& [y, x] : pixelsOf(height, width, static_cast<unsigned>(index * 31 + channel))) {
        const ConvPixelBreakdown b = explainConvPixel(*model, conv, *input, channel, y, x);
        const float engineValue = output[(int64_t{channel} * height + y) * width + x];
        EXPECT_NEAR(b.result(), engineValue, 1e-5) << "filter " << channel << " at y " << y << ", x " << x;
        // The parts add up to the whole, and padding contributes nothing.
        double sum = 0.0;
        for (size_t t = 0; t < b.products.size(); ++t) {
          EXPECT_EQ(b.products[t], b.inputs[t] * b.weights[t]);
          if (b.padding[t]) {
            EXPECT_EQ(b.inputs[t], 0.0);
          }
          sum += b.products[t];
        }
        EXPECT_NEAR(sum, b.productSum, 1e-9);
        bool anyPadding = false;
        for (bool p : b.padding) anyPadding = anyPadding || p;
        paddedWindows += anyPadding ? 1 : 0;
      }
  }
  return paddedWindows;
}

std::vector<std::string> fp32VariantsHere() {
  std::vector<std::string> ids;
  for (const ConvVariant& v : convVariants())
    if (v.unavailableReason().empty() && v.arithmetic == "FP32") ids.push_back(v.id);
  return ids;
}

TEST(ConvPixel, SumOfProductsPlusBiasEqualsTheEngineOutputOnAPaddedStridedModel) {
  const auto model = paddedModel();
  const Tensor picture = signedPicture(13, 11, 7);
  for (const std::string& variant : fp32VariantsHere())
    EXPECT_GT(expectBreakdownsMatch(model, picture, variant), 0) << "no checked window covered the padding";
}

TEST(ConvPixel, SumOfProductsPlusBiasEqualsTheEngineOutputOnTheShippedModels) {
  const std::string folder = defaultDataFolder().string();
  const ImageSet images = ImageSet::loadIdxFolder(folder);
  for (const char* name : {"course-high", "lenet5"}) {
    const auto model = loadOnnxModel(kModels + "/" + name + ".onnx");
    const Tensor picture = images.batch(17, 1, model->inputHeight(), model->inputWidth());
    for (const std::string& variant : fp32VariantsHere()) expectBreakdownsMatch(model, picture, variant);
  }
}

TEST(ConvPixel, TheWindowCoversPaddingExactlyWhereItHangsOverTheInput) {
  const auto model = paddedModel();
  const Node& conv = model->nodes[0];  // pads top 2, left 1, bottom 0, right 2; stride 2 x 1
  const Tensor picture = signedPicture(13, 11, 3);
  // Top-left output pixel: the window starts at input row -2, column -1.
  const ConvPixelBreakdown corner = explainConvPixel(*model, conv, picture, 1, 0, 0);
  EXPECT_EQ(corner.inputRow(0), -2);
  EXPECT_EQ(corner.inputColumn(0), -1);
  for (int ky = 0; ky < 3; ++ky)
    for (int kx = 0; kx < 3; ++kx) {
      const bool outside = ky < 2 || kx < 1;  // rows -2, -1 and column -1
      EXPECT_EQ(corner.padding[static_cast<size_t>(corner.termIndex(0, ky, kx))], outside) << ky << "," << kx;
      if (!outside) {
        EXPECT_EQ(corner.inputs[static_cast<size_t>(corner.termIndex(0, ky, kx))],
                  picture[corner.inputRow(ky) * 11 + corner.inputColumn(kx)]);
      }
    }
  EXPECT_TRUE(corner.hasBias);
  EXPECT_EQ(corner.bias, -0.5);
  // Output 7 x 12: (13 + 2 - 3) / 2 + 1 rows, (11 + 3 - 3) + 1 columns.
  EXPECT_EQ(corner.problem.outHeight(), 7);
  EXPECT_EQ(corner.problem.outWidth(), 12);
}

TEST(ConvPixel, APixelOutsideTheOutputIsRefusedNamingTheNode) {
  const auto model = paddedModel();
  const Tensor picture = signedPicture(13, 11, 5);
  testing::expectError([&] { explainConvPixel(*model, model->nodes[0], picture, 0, 7, 0); },
                       {"padded_conv", "y 7", "3 x 7 x 12"});
  testing::expectError([&] { explainConvPixel(*model, model->nodes[0], picture, 3, 0, 0); }, {"channel 3"});
  testing::expectError([&] { explainConvPixel(*model, model->nodes[1], picture, 0, 0, 0); }, {"not a Conv"});
}

}  // namespace
}  // namespace convscope
