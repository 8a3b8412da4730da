// Classifies a range of an ImageSet with an Engine, in chunks so memory stays bounded, and sums
// each conv layer's op time over the chunks. The CLI's classify command and the GUI's batch
// runs are thin wrappers around this.
#pragma once

#include <functional>
#include <vector>

#include "app/core/data/image_set.h"
#include "app/core/engine/engine.h"

namespace convscope {

struct ImageClassification {
  int index = 0;   // position in the image set
  int label = -1;  // ImageSet::kNoLabel when unknown
  int predicted = 0;
  std::vector<float> probabilities;
};

struct ClassificationRun {
  std::vector<ImageClassification> images;
  std::vector<ConvLayerTime> convTimes;  // per conv layer, seconds summed over all chunks
  int correct = 0;
  int labelled = 0;
  double seconds = 0.0;  // whole run, preprocessing included
  bool cancelled = false;

  double accuracy() const { return labelled ? static_cast<double>(correct) / labelled : 0.0; }
};

// `progress(done, total)` is called after each chunk; returning false stops the run early
// (cancelled = true, the images done so far are kept).
ClassificationRun classify(Engine& engine, const ImageSet& images, int first, int count, int chunk = 256,
                           const std::function<bool(int, int)>& progress = {});

// The `k` most probable classes of one image, most probable first (all of them when k is larger):
// what a model with many classes shows instead of every bar. Equal probabilities keep the lower
// class first, and a NaN (a broken kernel's output) ranks below every number, so the order is the
// same wherever it is computed.
std::vector<int> topClasses(const std::vector<float>& probabilities, int k);

// The conv layers of one pass of `engine`'s network over the first `batch` images of `images` (as
// many as there are), in execution order: their shapes at that batch and who ran each (the
// variant, or the one it fell back to, and why). What a timer needs before it times the layers.
std::vector<ConvLayerTime> convLayersAtBatch(Engine& engine, const ImageSet& images, int batch);

}  // namespace convscope
