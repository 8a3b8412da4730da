#include "app/core/engine/confusion.h"

#include <string>

#include "app/core/data/image_set.h"
#include "app/core/util/error.h"

namespace convscope {

ConfusionMatrix::ConfusionMatrix(const ClassificationRun& run, int classes)
    : classes_(classes), cells_(static_cast<size_t>(classes) * static_cast<size_t>(classes)) {
  if (classes < 1) throw Error("a confusion matrix needs at least one class");
  for (size_t i = 0; i < run.images.size(); ++i) {
    const ImageClassification& image = run.images[i];
    if (image.label == ImageSet::kNoLabel) continue;
    if (image.label < 0 || image.label >= classes || image.predicted < 0 || image.predicted >= classes)
      throw Error("image #" + std::to_string(image.index) + ": label " + std::to_string(image.label) +
                  " or prediction " + std::to_string(image.predicted) + " is not one of the " +
                  std::to_string(classes) + " classes");
    cells_[static_cast<size_t>(image.label * classes + image.predicted)].push_back(static_cast<int>(i));
    ++total_;
  }
}

const std::vector<int>& ConfusionMatrix::cell(int trueClass, int predicted) const {
  if (trueClass < 0 || trueClass >= classes_ || predicted < 0 || predicted >= classes_)
    throw Error("there is no confusion-matrix cell (" + std::to_string(trueClass) + ", " + std::to_string(predicted) +
                ") among " + std::to_string(classes_) + " classes");
  return cells_[static_cast<size_t>(trueClass * classes_ + predicted)];
}

int ConfusionMatrix::correct() const {
  int sum = 0;
  for (int c = 0; c < classes_; ++c) sum += count(c, c);
  return sum;
}

int ConfusionMatrix::classTotal(int trueClass) const {
  int sum = 0;
  for (int p = 0; p < classes_; ++p) sum += count(trueClass, p);
  return sum;
}

double ConfusionMatrix::classAccuracy(int trueClass) const {
  const int all = classTotal(trueClass);
  return all ? static_cast<double>(count(trueClass, trueClass)) / all : 0.0;
}

}  // namespace convscope
