// End to end: every shipped model, and the same weights as exported by both PyTorch exporters,
// classifies the whole Fashion-MNIST test set exactly as PyTorch did when it was exported: the
// same accuracy and the same predicted class for every one of the 10,000 images.
#include <gtest/gtest.h>

#include "app/core/data/image_set.h"
#include "app/core/engine/classifier.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"

namespace convscope {
namespace {

struct Case {
  std::string onnx;  // the file under test
  std::string card;  // the shipped model whose recorded PyTorch results it must reproduce
};

std::ostream& operator<<(std::ostream& out, const Case& c) {
  return out << c.onnx;
}

const std::string kModels = CONVSCOPE_MODELS_DIR;
const std::string kExported = std::string(CONVSCOPE_TEST_DATA_DIR) + "/exported";

class ShippedModel : public ::testing::TestWithParam<Case> {
 protected:
  static const ImageSet& testSet() {
    static const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
    return set;
  }
};

TEST_P(ShippedModel, ReproducesPyTorchOnTheWholeTestSet) {
  const auto model = loadOnnxModel(GetParam().onnx);
  const auto card = readModelCard(GetParam().card);
  ASSERT_TRUE(card) << "no model card beside " << GetParam().card;
  ASSERT_EQ(card->testCount, 10000);
  ASSERT_EQ(card->predictions.size(), 10000u);

  // The CPU variants fast enough for 10,000 images: the BLAS one, and oneDNN's with its fused
  // conv -> activation -> pooling stages (the reference's double sums would take minutes).
  for (const std::string variant : {"cpu-im2col-gemm", "cpu-onednn"}) {
    SCOPED_TRACE(variant);
    Engine engine(model, variant);
    const ClassificationRun run = classify(engine, testSet(), 0, testSet().count());
    ASSERT_EQ(run.labelled, 10000);
    EXPECT_EQ(run.correct, card->testCorrect);
    EXPECT_DOUBLE_EQ(run.accuracy(), *card->testAccuracy);

    int differing = 0;
    for (const ImageClassification& c : run.images)
      if (c.predicted != card->predictions[static_cast<size_t>(c.index)] - '0') {
        if (++differing <= 5)
          ADD_FAILURE() << "image " << c.index << ": engine says " << c.predicted << ", PyTorch said "
                        << card->predictions[static_cast<size_t>(c.index)];
      }
    EXPECT_EQ(differing, 0);

    ASSERT_FALSE(card->sampleProbabilities.empty());
    for (size_t i = 0; i < card->sampleProbabilities.size(); ++i)
      for (size_t k = 0; k < 10; ++k)
        EXPECT_NEAR(run.images[i].probabilities[k], card->sampleProbabilities[i][k], 2e-5)
            << "image " << i << " class " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ShippedModel,
                         ::testing::Values(Case{kModels + "/course-high.onnx", kModels + "/course-high.onnx"},
                                           Case{kModels + "/course-low.onnx", kModels + "/course-low.onnx"},
                                           Case{kModels + "/lenet5.onnx", kModels + "/lenet5.onnx"},
                                           Case{kExported + "/course-high-dynamo-op18.onnx",
                                                kModels + "/course-high.onnx"},
                                           Case{kExported + "/lenet5-dynamo-op18.onnx", kModels + "/lenet5.onnx"},
                                           Case{kExported + "/lenet5-torchscript-op13.onnx", kModels + "/lenet5.onnx"}),
                         [](const auto& info) {
                           std::string name = std::filesystem::path(info.param.onnx).stem().string();
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(ShippedModelCards, CourseHighIsWellTrainedAndCourseLowIsWeak) {
  EXPECT_GE(readModelCard(kModels + "/course-high.onnx")->testAccuracy.value(), 0.89);
  const double low = readModelCard(kModels + "/course-low.onnx")->testAccuracy.value();
  EXPECT_GE(low, 0.6);
  EXPECT_LE(low, 0.75);
  EXPECT_GE(readModelCard(kModels + "/lenet5.onnx")->testAccuracy.value(), 0.89);
}

}  // namespace
}  // namespace convscope
