// What one classification produced, handed from the live-inference job to the widgets: the
// probabilities, every layer's output (the input as the model saw it first) and the op times.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/core/data/data_set_distance.h"
#include "app/core/data/preprocessing.h"
#include "app/core/engine/engine.h"
#include "ui/inference/input_image.h"

namespace convscope::ui {

struct InferenceOutcome {
  InputImage input;
  std::string modelName;
  // The model and the rule that made its input: what a later job on the same picture (the
  // occlusion map) needs to run the same network on the same values.
  std::shared_ptr<const Model> model;
  Preprocessing preprocessing;
  std::string variant;     // the selected variant (a layer may have fallen back: see convTimes)
  std::string deviceName;  // "CPU" or the GPU's name
  std::vector<float> probabilities;
  std::vector<LayerOutput> layers;
  // The order of a colour model's input channels: the input is drawn in colour, R, G, B.
  bool inputIsBgr = false;
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
  // The machine's load when it was timed (getloadavg's one-minute figure; negative when unknown)
  // and its core count: other programs than ConvScope's jobs make a time jump too.
  double loadAverage = -1.0;
  int cores = 0;
  // How far a picture of the user's (not one of the test set) lies from the test set
  // (data_set_distance.h); none for the set's own pictures or before the set has loaded.
  std::optional<DataSetDistance::Result> dataSetDistance;
  double seconds = 0.0;  // the whole job: engine set-up, resize, inference, capture, timing
  // One picture: the resize and the inference with every layer captured (the warm runs timed
  // after it excluded). What the status bar shows as the time per picture.
  double pictureSeconds = 0.0;

  int topClass() const;
};

}  // namespace convscope::ui
