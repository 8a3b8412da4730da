#include "app/core/model/model_card.h"

#include <nlohmann/json.hpp>

#include "app/core/data/class_labels.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/json_file.h"

namespace convscope {
namespace {

// The shipped cards are about 20 kB (10,000 predictions); nothing near this is a model card.
constexpr uint64_t kMaxModelCardBytes = uint64_t{64} << 20;

// A card's "class_names": strings, none blank (a blank one would leave its output unnamed), at
// most kMaxClassNames of them.
std::vector<std::string> classNamesOf(const nlohmann::json& names, const std::string& card) {
  const std::string problem = card + ": malformed model card: ";
  if (!names.is_array()) throw Error(problem + "\"class_names\" is not a list of names");
  if (names.size() > kMaxClassNames)
    throw Error(problem + "\"class_names\" names more than " + std::to_string(kMaxClassNames) + " classes");
  std::vector<std::string> read;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string() || names[i].get<std::string>().find_first_not_of(" \t") == std::string::npos)
      throw Error(problem + "class_names[" + std::to_string(i) + "] is not a name (a string that is not blank)");
    read.push_back(names[i].get<std::string>());
  }
  return read;
}

}  // namespace

std::optional<ModelCard> readModelCard(const std::filesystem::path& modelPath) {
  std::filesystem::path path = modelPath;
  path.replace_extension(".json");
  // No card is no error; a folder, a FIFO or a device in its place is (refused by InputFile).
  if (!somethingExistsAt(path)) return std::nullopt;
  InputFile file(path, "a model card", kMaxModelCardBytes);
  const std::string text = file.readAll();
  try {
    const nlohmann::json j = parseJsonText(text, path.string());
    if (!j.is_object()) throw Error(path.string() + ": a model card is a JSON object");
    ModelCard card;
    card.description = j.value("description", "");
    if (j.contains("test_accuracy")) card.testAccuracy = j.at("test_accuracy").get<double>();
    card.testCorrect = j.value("test_correct", 0);
    card.testCount = j.value("test_count", 0);
    card.predictions = j.value("predictions", "");
    card.sampleProbabilities = j.value("sample_probabilities", std::vector<std::vector<float>>{});
    card.exporter = j.value("exporter", "");
    card.trainedOn = j.value("trained_on", "");
    if (j.contains("class_names")) card.classNames = classNamesOf(j.at("class_names"), path.string());
    if (j.contains("preprocessing")) {
      card.preprocessing = j.at("preprocessing");
      card.sourcePath = path.string();
      preprocessingFromJson(card.preprocessing, defaultPreprocessing(1), path.string());  // refused here if malformed
    }
    return card;
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": malformed model card: " + describeJsonFieldError(e));
  }
}

Preprocessing preprocessingFor(const Model& model, const std::optional<ModelCard>& card) {
  const Preprocessing defaults = defaultPreprocessing(model.inputChannels());
  if (!card || card->preprocessing.is_null()) return defaults;
  return preprocessingFromJson(card->preprocessing, defaults, card->sourcePath);
}

}  // namespace convscope
