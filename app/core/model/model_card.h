// The facts recorded beside a shipped model when it was trained (data/models/<name>.json): a
// description, PyTorch's own test-set accuracy and per-image predictions, so that ConvScope can
// show them and the tests can check the engine reproduces them image for image.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/core/data/preprocessing.h"
#include "app/core/model/model.h"

namespace convscope {

struct ModelCard {
  std::string description;
  // PyTorch's accuracy on the data set's test set; absent for a pretrained model shipped
  // without one (ImageNet's validation set is not a package).
  std::optional<double> testAccuracy;
  int testCorrect = 0;
  int testCount = 0;
  std::string predictions;                              // one digit per test image: PyTorch's argmax
  std::vector<std::vector<float>> sampleProbabilities;  // first test images, PyTorch's output
  std::string exporter;
  std::string trainedOn;
  // "class_names": the name of each of the model's outputs, in order (ImageNet's 1,000 for a
  // pretrained CNN); empty when the card names none (the data set's names serve).
  std::vector<std::string> classNames;
  // "preprocessing": how pictures become this model's input (preprocessing.h), applied over the
  // default rule for the model's channels by preprocessingFor; null when the card sets none.
  // Checked when the card is read.
  nlohmann::json preprocessing;
  std::string sourcePath;  // the card's file, for messages
};

// The rule pictures are brought to `model`'s input by: its card's "preprocessing" over the
// default for its input channels. Throws convscope::Error naming the card when malformed.
Preprocessing preprocessingFor(const Model& model, const std::optional<ModelCard>& card);

// The card next to `modelPath` (same name, .json), or nullopt when there is none.
// Throws convscope::Error naming the file when it exists but is malformed.
std::optional<ModelCard> readModelCard(const std::filesystem::path& modelPath);

}  // namespace convscope
