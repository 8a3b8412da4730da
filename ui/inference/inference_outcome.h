// What one classification produced, handed from the live-inference job to the widgets: the
// probabilities, every layer's output (the input as the model saw it first) and the op times.
#pragma once

#include <string>
#include <vector>

#include "app/core/engine/engine.h"
#include "ui/inference/input_image.h"

namespace convscope::ui {

struct InferenceOutcome {
  InputImage input;
  std::string modelName;
  std::string variant;     // the selected variant (a layer may have fallen back: see convTimes)
  std::string deviceName;  // "CPU" or the GPU's name
  std::vector<float> probabilities;
  std::vector<LayerOutput> layers;
  // What a student reads above each layer (layerTitles() of the core), parallel to `layers`;
  // empty for the input.
  std::vector<std::string> layerTitles;
  // Per conv layer the median op time of `timedRuns` warm runs of this picture: one cold sample
  // varies several-fold from run to run.
  std::vector<ConvLayerTime> convTimes;
  int timedRuns = 0;
  // Other jobs ("sweep", "profile", "test-set load", …) queued or running while this picture was
  // timed. The JobRunner runs one job at a time, so they did not run at the same instant, but
  // the machine was busy around it.
  std::vector<std::string> busyWith;
  double seconds = 0.0;  // the whole job: engine set-up, resize, inference, capture, timing
  // One picture: the resize and the inference with every layer captured (the warm runs timed
  // after it excluded). What the status bar shows as the time per picture.
  double pictureSeconds = 0.0;

  int topClass() const;
};

}  // namespace convscope::ui
