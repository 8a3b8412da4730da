// What one classification produced, handed from the inference worker to the widgets: the
// probabilities, every layer's output (the input as the model saw it first) and the op times.
#pragma once

#include <string>
#include <vector>

#include "engine/engine.h"
#include "ui/inference/input_image.h"

namespace convscope::ui {

struct InferenceOutcome {
  InputImage input;
  std::string modelName;
  std::string variant;     // the selected variant (a layer may have fallen back: see convTimes)
  std::string deviceName;  // "CPU" or the GPU's name
  std::vector<float> probabilities;
  std::vector<LayerOutput> layers;
  std::vector<ConvLayerTime> convTimes;
  double seconds = 0.0;  // the whole request on the worker: resize, inference, capture

  int topClass() const;
};

}  // namespace convscope::ui
