// The facts recorded beside a shipped model when it was trained (data/models/<name>.json): a
// description, PyTorch's own test-set accuracy and per-image predictions, so that ConvScope can
// show them and the tests can check the engine reproduces them image for image.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace convscope {

struct ModelCard {
  std::string description;
  double testAccuracy = 0.0;
  int testCorrect = 0;
  int testCount = 0;
  std::string predictions;                              // one digit per test image: PyTorch's argmax
  std::vector<std::vector<float>> sampleProbabilities;  // first test images, PyTorch's output
  std::string exporter;
  std::string trainedOn;
  // "class_names": the name of each of the model's outputs, in order (ImageNet's 1,000 for a
  // pretrained CNN); empty when the card names none (the data set's names serve).
  std::vector<std::string> classNames;
};

// The card next to `modelPath` (same name, .json), or nullopt when there is none.
// Throws convscope::Error naming the file when it exists but is malformed.
std::optional<ModelCard> readModelCard(const std::filesystem::path& modelPath);

}  // namespace convscope
