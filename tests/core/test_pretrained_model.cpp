// A real pretrained CNN on real photos: EfficientNet-Lite0 with its ImageNet weights (exported by
// scripts/export_efficientnet_lite0.py) classifies scikit-image's photos (Debian's
// python3-skimage) with every variant that runs here, and gives the probabilities PyTorch gave
// on the same preprocessed photos (recorded in its card) to 1e-4, hence the same top 5.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_file.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/class_evidence.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/picture_input.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::string kModel = std::string(CONVSCOPE_MODELS_DIR) + "/efficientnet-lite0.onnx";
const std::string kCard = std::string(CONVSCOPE_MODELS_DIR) + "/efficientnet-lite0.json";

std::string photosFolder() {
  const char* folder = std::getenv("CONVSCOPE_PHOTOS_DIR");
  return folder && *folder ? folder : "/usr/lib/python3/dist-packages/skimage/data";
}

// The GPU machine's build has no OpenCV: there the photos come as binary PPM copies (FILE.ppm
// beside where FILE would be, the same 8-bit R, G, B values, made by Pillow here), read by this
// small reader into the picture OpenCV would have given (checked equal, value for value, before the
// copies travel).
std::optional<Picture> readPpmCopy(const std::string& path) {
  std::ifstream in(path + ".ppm", std::ios::binary);
  if (!in) return std::nullopt;
  std::string magic;
  int width = 0, height = 0, maximum = 0;
  in >> magic >> width >> height >> maximum;
  in.get();  // the one white-space byte before the pixels
  if (magic != "P6" || maximum != 255 || width < 1 || height < 1) return std::nullopt;
  std::vector<unsigned char> bytes(static_cast<size_t>(width) * height * 3);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) return std::nullopt;
  Picture picture = blankPicture(height, width, 3);
  for (size_t i = 0; i < picture.planeSize(); ++i)
    for (int c = 0; c < 3; ++c)
      picture.plane(c)[i] = static_cast<float>(bytes[i * 3 + static_cast<size_t>(c)]) / 255.0f;
  return picture;
}

Picture readPhoto(const Engine& engine, const std::string& path) {
  if (imageFilesSupported()) return loadPictureForModel(engine, path).image;
  std::optional<Picture> copy = readPpmCopy(path);
  if (!copy) throw Error(path + ".ppm: this build reads no image files and there is no PPM copy of the photo");
  return *copy;
}

struct RecordedPhoto {
  std::string file;
  std::vector<int> top5;
  std::vector<float> probabilities;
};

std::vector<RecordedPhoto> recordedPhotos() {
  std::ifstream in(kCard);
  const nlohmann::json card = nlohmann::json::parse(in);
  std::vector<RecordedPhoto> photos;
  for (const nlohmann::json& p : card.at("photos")) {
    RecordedPhoto photo{p.at("file").get<std::string>(), {}, p.at("probabilities").get<std::vector<float>>()};
    for (const nlohmann::json& entry : p.at("top5")) photo.top5.push_back(entry.at(0).get<int>());
    photos.push_back(photo);
  }
  return photos;
}

TEST(PretrainedModel, EfficientNetLite0GivesPyTorchsProbabilitiesOnRealPhotosWithEveryVariant) {
  const std::vector<RecordedPhoto> photos = recordedPhotos();
  ASSERT_GE(photos.size(), 3u);
  for (const RecordedPhoto& photo : photos)
    ASSERT_TRUE(std::ifstream(photosFolder() + "/" + photo.file + (imageFilesSupported() ? "" : ".ppm")).good())
        << photosFolder() << "/" << photo.file << " is missing: scripts/install-deps.sh installs python3-skimage";
  const auto model = loadOnnxModel(kModel);
  const auto card = readModelCard(kModel);
  ASSERT_TRUE(card);
  ASSERT_EQ(card->classNames.size(), 1000u);
  EXPECT_EQ(model->inputChannels(), 3);

  int variantsRun = 0;
  for (const ConvVariant& variant : convVariants()) {
    if (!variant.unavailableReason().empty()) {
      EXPECT_FALSE(variant.runsOnGpu() && testing::gpuRequired()) << variant.id << ": " << variant.unavailableReason();
      continue;
    }
    SCOPED_TRACE(variant.id);
    Engine engine(model, variant.id);
    engine.setPreprocessing(preprocessingFor(*model, card));
    std::vector<Picture> pictures;
    for (const RecordedPhoto& photo : photos)
      pictures.push_back(pictureAtModelInput(engine, readPhoto(engine, photosFolder() + "/" + photo.file)));
    const ImageSet set = ImageSet::fromImages("photos", pictures, card->classNames);
    const ClassificationRun run = classify(engine, set, 0, set.count(), set.count());
    ASSERT_EQ(run.images.size(), photos.size());
    for (size_t i = 0; i < photos.size(); ++i) {
      const std::vector<float>& ours = run.images[i].probabilities;
      ASSERT_EQ(ours.size(), 1000u);
      double worst = 0.0;
      for (size_t k = 0; k < ours.size(); ++k)
        worst = std::max(worst, std::abs(double{ours[k]} - photos[i].probabilities[k]));
      EXPECT_LE(worst, 1e-4) << photos[i].file << ": largest difference from PyTorch's probabilities";
      EXPECT_EQ(topClasses(ours, 5), photos[i].top5) << photos[i].file;
    }
    // chelsea is a cat.
    EXPECT_NE(card->classNames[static_cast<size_t>(run.images[0].predicted)].find("cat"), std::string::npos);
    ++variantsRun;
  }
  EXPECT_GE(variantsRun, 2);
}

// EfficientNet-Lite0 ends in global average pooling and one linear layer: its class activation map
// is exact, so the map of chelsea's top class, averaged, plus the class's bias, is the logit its
// classifier computed.
TEST(PretrainedModel, EfficientNetLite0sClassActivationMapAddsUpToItsLogit) {
  const auto model = loadOnnxModel(kModel);
  const auto card = readModelCard(kModel);
  ASSERT_TRUE(card);
  std::string whyNot;
  const std::optional<ActivationMapHead> head = findActivationMapHead(*model, &whyNot);
  ASSERT_TRUE(head) << whyNot;
  EXPECT_EQ(head->features, 1280);
  EXPECT_EQ(head->classes, 1000);
  Engine engine(model, "cpu-onednn");
  engine.setPreprocessing(preprocessingFor(*model, card));
  const Picture picture = pictureAtModelInput(engine, readPhoto(engine, photosFolder() + "/chelsea.png"), true);
  const Tensor input =
      ImageSet::fromImages("chelsea", {picture}, {}).batch(0, 1, picture.height, picture.width, engine.preprocessing());
  const InferenceResult result = engine.infer(input, true);
  const std::vector<float> probabilities(result.probabilities.data(), result.probabilities.data() + 1000);
  const int top = topClasses(probabilities, 1).front();
  EXPECT_NE(card->classNames[static_cast<size_t>(top)].find("cat"), std::string::npos);
  const ActivationMap map = classActivationMap(*model, *head, headFeatures(*head, result.layers), 0, top);
  EXPECT_EQ(map.height, 7);
  EXPECT_EQ(map.width, 7);
  for (const LayerOutput& layer : result.layers) {
    if (layer.node == head->denseNode) {
      EXPECT_NEAR(map.logit, layer.value.data()[top], 1e-3);
    }
  }
}

}  // namespace
}  // namespace convscope
