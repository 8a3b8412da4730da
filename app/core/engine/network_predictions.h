// The network pass of a student's kernel in two processes: the kernel's process classifies the
// test images (read without their labels) and writes one prediction per image to a file; the
// checker reads the labels and counts. The answers never sit in the memory of the process that runs
// the student's code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "app/core/data/image_set.h"

namespace convscope {

// predictions.i32 in the folder the parent made: one int32 per test image, in this machine's byte
// order (both processes run here); -1 for an image the network did not reach.
std::filesystem::path networkPredictionsFile(const std::filesystem::path& folder);
void writePredictions(const std::filesystem::path& file, const std::vector<int32_t>& predicted);
// The checker knows how many images there are (it read them): a file of any other size is refused
// by name before it is read (throws convscope::Error).
std::vector<int32_t> readPredictions(const std::filesystem::path& file, int imageCount);

struct PredictionScore {
  int correct = 0;
  int labelled = 0;  // images with a label
  double accuracy() const { return labelled ? static_cast<double>(correct) / labelled : 0.0; }
};
// `predicted` against `labelled`'s labels, image by image; throws when the counts differ.
PredictionScore scorePredictions(const std::vector<int32_t>& predicted, const ImageSet& labelled);

}  // namespace convscope
