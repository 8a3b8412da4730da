// Where a classifier fails: the confusion matrix of a classification run (true class x predicted
// class), with the images of every cell, so that a teacher can open the images behind a count.
#pragma once

#include <vector>

#include "app/core/engine/classifier.h"

namespace convscope {

class ConfusionMatrix {
 public:
  // Images without a label are left out; a label or prediction outside [0, classes) is refused
  // (convscope::Error naming the image).
  ConfusionMatrix(const ClassificationRun& run, int classes);

  int classes() const { return classes_; }
  int count(int trueClass, int predicted) const { return static_cast<int>(cell(trueClass, predicted).size()); }
  // Positions in the run's `images` (not test-set indices) of the images in that cell.
  const std::vector<int>& cell(int trueClass, int predicted) const;
  int total() const { return total_; }
  int correct() const;
  double accuracy() const { return total_ ? static_cast<double>(correct()) / total_ : 0.0; }
  int classTotal(int trueClass) const;
  double classAccuracy(int trueClass) const;  // recall of the class; 0 when it has no image

 private:
  int classes_;
  int total_ = 0;
  std::vector<std::vector<int>> cells_;  // classes x classes, row: true class
};

}  // namespace convscope
