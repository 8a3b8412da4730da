// What a student reads above a layer's maps instead of the ONNX node name: the kind of layer,
// numbered per kind in execution order, and what it does to the shape of one image, e.g.
// "conv 1 · 12 filters 7×7 → 12×42×42" or "dense 2 · 128 → 10". The ONNX name stays available
// (Node::name) for tooltips. Plain strings, no Qt, so the CLI can print the same titles.
#pragma once

#include <string>
#include <vector>

#include "app/core/model/model.h"

namespace convscope {

// The readable name of an operator kind: "conv", "dense", "max-pool", "tanh", "flatten" ...
std::string layerKind(const std::string& opType);

// One title per node of `model`, in the order of model.nodes, for a single image. Throws
// convscope::Error naming the node when the model's shapes are inconsistent.
std::vector<std::string> layerTitles(const Model& model);

}  // namespace convscope
