// How unlike the data set a picture is: a simple, documented measure, so that a confident answer
// about a picture the model has never seen the like of (a plasma fractal, a cat) comes with a
// warning instead of looking like knowledge.
//
// The measure (README, "Pictures of your own"): the picture, resized to the data set's size as
// every input is (resizedToFit), is compared pixel by pixel with the set's first 2,000 images (the
// reference); its distance is the root mean square difference to the nearest of them. The next
// 500 images of the set (the yardstick) get the same distance, and the picture's is told as a
// share of theirs: "farther out than 99.5 % of the test set's own pictures". Of the set's own
// pictures about 5 % are farther out than 95 % (that is what a share means), so a "far out" hint
// is wrong for about one in twenty of them, and "unlike" for about one in a hundred. It knows
// nothing of what the model learnt; it says how far the picture lies from what it was measured on.
#pragma once

#include <vector>

#include "app/core/data/picture.h"

namespace convscope {

class ImageSet;

class DataSetDistance {
 public:
  static constexpr int kReferenceImages = 2000;
  static constexpr int kYardstickImages = 500;
  static constexpr double kUnusualShare = 0.95;  // "far out for the data set"
  static constexpr double kUnlikeShare = 0.99;   // "unlike the data set"

  // Throws convscope::Error when the set has fewer than two images. Takes about a second for
  // Fashion-MNIST (500 x 2,000 comparisons of 784 pixels): build it off the window's thread.
  explicit DataSetDistance(const ImageSet& set);

  struct Result {
    double distance = 0.0;     // RMS difference to the nearest reference image (pixels in [0, 1])
    double shareCloser = 0.0;  // of the yardstick's images, the share nearer the reference than this
    int nearestLabel = -1;     // the label of that nearest image (-1 without labels)
    bool unusual() const { return shareCloser >= kUnusualShare; }
    bool unlike() const { return shareCloser >= kUnlikeShare; }
  };
  Result of(const Picture& picture) const;

  int referenceSize() const { return static_cast<int>(referenceLabels_.size()); }
  int yardstickSize() const { return static_cast<int>(yardstick_.size()); }

 private:
  // The nearest reference image of an image at the set's size: its squared distance and label.
  std::pair<double, int> nearest(const float* pixels) const;

  int height_ = 0, width_ = 0;
  std::vector<float> reference_;  // referenceSize() images of height_ * width_, one after another
  std::vector<int> referenceLabels_;
  std::vector<double> yardstick_;  // sorted RMS distances of the yardstick's images
};

}  // namespace convscope
