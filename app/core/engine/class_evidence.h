// Why the model chose a class: where the evidence lies in the picture, two ways.
//  - The class activation map (Zhou et al., 2016), for a network that ends in global average
//    pooling and one linear layer (EfficientNet, ResNet, MobileNet): the logit of class c is
//    bias[c] + the mean over positions of sum_k W[c][k] A_k(y, x), so the sum inside is exactly
//    how much each position of the last feature maps adds to c. No gradients, no approximation:
//    the map's mean plus the bias is the logit the model computed.
//  - Occlusion sensitivity (Zeiler and Fergus, 2014), for any model: the picture with a grey
//    patch at every position, all of them classified as batches as large as memory allows (on the
//    GPU usually one), and the drop of the class's probability at each position.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/core/engine/engine.h"

namespace convscope {

// The end of a network that has a class activation map: the node whose maps (K x h x w) are
// averaged, and the linear layer that weighs the K averages into the classes' logits.
struct ActivationMapHead {
  std::string featureNode;  // the node whose output the global average pooling reads
  std::string poolNode;
  std::string denseNode;
  std::string weights;            // the linear layer's weight matrix (a model weight)
  std::string bias;               // its bias, "" when it has none
  bool weightsTransposed = true;  // W is [classes][K] (PyTorch's Linear), else [K][classes]
  int64_t features = 0;           // K
  int64_t classes = 0;
};

// The head, or nullopt with `whyNot` (when given) saying what the model ends in instead
// ("the model has no global average pooling", "the pooled values go through Relu before the
// classifier"...). Only value-preserving steps (Flatten, Reshape, Identity) may lie between the
// pooling and the linear layer, and only a softmax after it.
std::optional<ActivationMapHead> findActivationMapHead(const Model& model, std::string* whyNot = nullptr);

// The features the head's pooling read, from the layers an inference captured
// (Engine::infer(images, true)). Throws convscope::Error when they were not captured.
const Tensor& headFeatures(const ActivationMapHead& head, const std::vector<LayerOutput>& layers);

struct ActivationMap {
  int classIndex = 0;
  int height = 0, width = 0;  // the feature maps' (7 x 7 for EfficientNet-Lite0 at 224)
  std::vector<float> values;  // height x width: what each position adds to the class's logit
  // The map's mean plus the class's bias: the logit itself, computed from the map (the check
  // that the map is the model's own arithmetic).
  double logit = 0.0;
};

// Class `classIndex`'s map for image `image` of `features` (N x K x h x w, the head's features).
// Throws convscope::Error naming the class or image when out of range, or the shapes when they
// are not the head's.
ActivationMap classActivationMap(const Model& model, const ActivationMapHead& head, const Tensor& features, int image,
                                 int classIndex);

// Occlusion: which patch, which class, how many pictures per batch.
struct OcclusionRequest {
  int classIndex = -1;  // -1: the picture's most probable class
  int patch = 0;        // the patch's side in input pixels; 0: defaultPatch()
  int stride = 0;       // between patch positions; 0: half the patch
  // The patch's value per input channel as the model takes it; unset: grey (0.5) through the
  // engine's preprocessing, so the patch is a grey square on the photo, whatever the model's
  // mean and deviation.
  std::optional<std::array<float, 3>> fill;
  // Pictures per inference; 0: as many as memory allows (Engine::largestBatchThatFits) on a GPU,
  // about 2 GFLOP's worth (at least 16) on the CPU.
  int batch = 0;
};

struct OcclusionMap {
  int classIndex = 0;
  float baseline = 0.0f;  // the class's probability without a patch
  int patch = 0, stride = 0;
  int height = 0, width = 0;  // the input's
  std::vector<int> rowStarts, columnStarts;
  // rows x columns (rowStarts x columnStarts): baseline minus the class's probability with the
  // patch's top-left corner there. Positive: the patch hid evidence for the class.
  std::vector<float> drop;
  // height x width: each input pixel's mean drop over the patches that cover it (the heat map).
  std::vector<float> pixelDrop;
  int pictures = 0;               // occluded pictures classified
  std::vector<int> batches;       // their batch sizes, in order
  double inferenceSeconds = 0.0;  // the inferences alone (host clock around each)
  std::string deviceName;
  bool cancelled = false;  // stopped by `progress`: `drop` holds NaN where no picture ran

  float dropAt(size_t row, size_t column) const { return drop[row * columnStarts.size() + column]; }
};

// A seventh of the input's shorter side, at least 1 (32 pixels at 224, 4 at 28): a part of an
// object (an eye, a sleeve), not the whole.
int defaultPatch(int height, int width);

// The positions of a patch along a side: 0, stride, 2 stride... and the last one at size - patch,
// so that the patches cover the side to its edge. Throws convscope::Error unless
// 1 <= patch <= size and stride >= 1.
std::vector<int> patchStarts(int size, int patch, int stride);

// The occlusion map of `input` (1 x C x H x W at the engine's model input, as the model takes it:
// a captured "input" layer). `progress(done, total)` is called after each batch; returning false
// stops (cancelled = true). Throws convscope::Error naming the problem for a bad request.
OcclusionMap occlusionSensitivity(Engine& engine, const Tensor& input, const OcclusionRequest& request,
                                  const std::function<bool(int, int)>& progress = {});

// "169 pictures in 1 batch of 169 in 41.2 ms on NVIDIA H200" / "... in 3 batches (64, 64, 41) ...".
std::string describeOcclusionRun(const OcclusionMap& map);

}  // namespace convscope
