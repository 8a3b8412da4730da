#include "app/core/engine/network_predictions.h"

#include <fstream>
#include <string>

#include "app/core/util/error.h"

namespace convscope {

std::filesystem::path networkPredictionsFile(const std::filesystem::path& folder) {
  return folder / "predictions.i32";
}

void writePredictions(const std::filesystem::path& file, const std::vector<int32_t>& predicted) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(predicted.data()),
            static_cast<std::streamsize>(predicted.size() * sizeof(int32_t)));
  out.close();
  if (!out) throw Error(file.string() + ": cannot write the network's predictions there");
}

std::vector<int32_t> readPredictions(const std::filesystem::path& file, int imageCount) {
  const uintmax_t expectedBytes = static_cast<uintmax_t>(imageCount) * sizeof(int32_t);
  std::error_code error;
  const uintmax_t bytes = std::filesystem::file_size(file, error);
  if (error)
    throw Error(file.string() + ": the network's predictions are missing (its process ended before writing them?)");
  if (bytes != expectedBytes)
    throw Error(file.string() + ": holds " + std::to_string(bytes) + " bytes, but " + std::to_string(imageCount) +
                " predictions are " + std::to_string(expectedBytes) +
                " bytes (a truncated or foreign file): not counted");
  std::vector<int32_t> predicted(static_cast<size_t>(imageCount));
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(predicted.data()), static_cast<std::streamsize>(expectedBytes));
  if (!in) throw Error(file.string() + ": cannot read the network's predictions");
  return predicted;
}

PredictionScore scorePredictions(const std::vector<int32_t>& predicted, const ImageSet& labelled) {
  if (predicted.size() != static_cast<size_t>(labelled.count()))
    throw Error(labelled.source() + ": " + std::to_string(labelled.count()) + " images but " +
                std::to_string(predicted.size()) + " predictions");
  PredictionScore score;
  for (int i = 0; i < labelled.count(); ++i) {
    const int label = labelled.label(i);
    if (label == ImageSet::kNoLabel) continue;
    ++score.labelled;
    score.correct += predicted[static_cast<size_t>(i)] == label ? 1 : 0;
  }
  return score;
}

}  // namespace convscope
