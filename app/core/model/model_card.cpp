#include "model/model_card.h"

#include <nlohmann/json.hpp>

#include <fstream>

#include "util/error.h"

namespace convscope {

std::optional<ModelCard> readModelCard(const std::filesystem::path& modelPath) {
  std::filesystem::path path = modelPath;
  path.replace_extension(".json");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    ModelCard card;
    card.description = j.value("description", "");
    card.testAccuracy = j.at("test_accuracy").get<double>();
    card.testCorrect = j.value("test_correct", 0);
    card.testCount = j.value("test_count", 0);
    card.predictions = j.value("predictions", "");
    card.sampleProbabilities = j.value("sample_probabilities", std::vector<std::vector<float>>{});
    card.exporter = j.value("exporter", "");
    card.trainedOn = j.value("trained_on", "");
    return card;
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": malformed model card (" + e.what() + ")");
  }
}

}  // namespace convscope
