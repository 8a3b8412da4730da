// The network a whole-network kernel takes (step 13 of the variant table): the course's shape --
// convolutions, each followed by its activation and pooling, a flatten, fully connected layers
// with their activations, and optionally a softmax -- read off a model's graph. A model of any
// other shape is not one, and the reason names the node that breaks the chain, so the plan can say
// why it runs layer by layer instead.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "app/core/model/model.h"

namespace convscope {

struct ChainConv {
  ConvProblem problem;                    // for one image (batch 1)
  std::string weights, bias;              // names in Model::weights; bias "" when the Conv has none
  ConvEpilogue epilogue;                  // the activation and pooling after it (bias pointer unset)
  int pooledHeight = 0, pooledWidth = 0;  // its output after the pooling (the conv's without one)
};

struct ChainDense {
  DenseStep step;
  std::string weights, bias;  // bias "" when the layer has none
  bool hasActivation = false;
  Activation activation = Activation::Relu;
};

struct ChainNetwork {
  std::vector<size_t> nodes;            // every node of the model, in order: the one stage that runs them
  int inputHeight = 0, inputWidth = 0;  // the model's input, one channel
  std::vector<ChainConv> convs;
  std::vector<ChainDense> dense;
  bool softmax = false;  // the last node is a softmax over each image's scores
  int classes() const { return dense.empty() ? 0 : static_cast<int>(dense.back().step.outputs); }
  // Floating-point operations for one image (multiply-add counts two), as the layers count them.
  int64_t flopsPerImage = 0;
  // Every weight the layers read (conv and fully connected weights and biases), in floats.
  int64_t weightElements = 0;
};

// The model as a chain network, or nullopt with `whyNot` saying which node breaks the pattern.
std::optional<ChainNetwork> matchChainNetwork(const Model& model, std::string* whyNot);

}  // namespace convscope
