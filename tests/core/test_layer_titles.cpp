// The readable layer titles of the shipped models, exactly as a student reads them above the
// feature maps. The expected strings are written from the networks the models were trained as
// (the nn.Sequential of scripts/train_models.py): filters, kernels and each layer's output for
// one image, worked out by hand below.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/layer_titles.h"
#include "model/onnx_loader.h"

namespace convscope {
namespace {

std::vector<std::string> titlesOf(const std::string& name) {
  return layerTitles(*loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/" + name + ".onnx"));
}

// course-high and course-low: 1x48x48, conv 12@7x7, tanh, max-pool 2, conv 24@7x7, tanh,
// max-pool 2, flatten, dense 128, tanh, dense 10, softmax.
// 48 - 7 + 1 = 42, 42 / 2 = 21, 21 - 7 + 1 = 15, 15 / 2 = 7 (floor), 24 * 7 * 7 = 1176.
const std::vector<std::string> kCourseTitles = {
    "conv 1 · 12 filters 7×7 → 12×42×42",
    "tanh 1 → 12×42×42",
    "max-pool 1 · 12×42×42 → 12×21×21",
    "conv 2 · 24 filters 7×7 → 24×15×15",
    "tanh 2 → 24×15×15",
    "max-pool 2 · 24×15×15 → 24×7×7",
    "flatten 1 · 24×7×7 → 1176",
    "dense 1 · 1176 → 128",
    "tanh 3 → 128",
    "dense 2 · 128 → 10",
    "softmax 1 → 10",
};

TEST(LayerTitles, CourseModelsReadAsTheirArchitecture) {
  EXPECT_EQ(titlesOf("course-high"), kCourseTitles);
  EXPECT_EQ(titlesOf("course-low"), kCourseTitles);
}

// LeNet-5: 1x28x28, conv 6@5x5 padded to keep 28x28, ReLU, average pool 2, conv 16@5x5 (28/2 = 14,
// 14 - 5 + 1 = 10), ReLU, average pool 2, dense 400 -> 120 -> 84 -> 10 with ReLU between, softmax.
TEST(LayerTitles, LeNet5ReadsAsItsArchitecture) {
  const std::vector<std::string> expected = {
      "conv 1 · 6 filters 5×5 → 6×28×28",
      "relu 1 → 6×28×28",
      "avg-pool 1 · 6×28×28 → 6×14×14",
      "conv 2 · 16 filters 5×5 → 16×10×10",
      "relu 2 → 16×10×10",
      "avg-pool 2 · 16×10×10 → 16×5×5",
      "flatten 1 · 16×5×5 → 400",
      "dense 1 · 400 → 120",
      "relu 3 → 120",
      "dense 2 · 120 → 84",
      "relu 4 → 84",
      "dense 3 · 84 → 10",
      "softmax 1 → 10",
  };
  EXPECT_EQ(titlesOf("lenet5"), expected);
}

TEST(LayerTitles, KindsAreNamedForStudentsAndUnknownOnesLowercased) {
  EXPECT_EQ(layerKind("Conv"), "conv");
  EXPECT_EQ(layerKind("Gemm"), "dense");
  EXPECT_EQ(layerKind("MatMul"), "dense");
  EXPECT_EQ(layerKind("MaxPool"), "max-pool");
  EXPECT_EQ(layerKind("AveragePool"), "avg-pool");
  EXPECT_EQ(layerKind("LeakyRelu"), "leakyrelu");
}

}  // namespace
}  // namespace convscope
