// How a picture becomes a model's input: the model's own rule, not Fashion-MNIST's. A picture
// (any size, [0, 1], gray or R, G, B) is framed to the model's input size, inverted where the rule
// says so, and its values then mapped channel by channel:
//   input[c] = (picture[source(c)] * valueRange - mean[c]) / deviation[c]
// with source(c) = c for RGB models and 2 - c for BGR ones. The rule comes from the model's card
// ("preprocessing", see docs/own-model.md), else from defaults by the model's input channels, and
// each field can be set on the command line and in the window.
#pragma once

#include <array>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace convscope {

// The data set's garments are light on black; photos and scans are mostly dark on light. One rule
// decides, for the window and the command line alike, whether a picture is inverted before a
// Fashion-MNIST model sees it.
enum class PictureInversion {
  Automatic,  // inverted when its border is mostly light (hasLightBackground): Fashion-MNIST's
  Always,     // classify --invert
  Never,      // classify --no-invert; every colour model
};

enum class PictureFraming {
  Fit,         // the whole picture, its aspect kept, padded with its background (resizedToFit)
  CentreCrop,  // the shorter side to input / cropFraction, then the centre cut out (centreCropped)
  Stretch,     // the whole picture stretched to the input (resized)
};

enum class ChannelOrder { Rgb, Bgr };

struct Preprocessing {
  PictureFraming framing = PictureFraming::Fit;
  double cropFraction = 0.875;  // CentreCrop only: ImageNet's 224 of 256
  PictureInversion inversion = PictureInversion::Automatic;
  ChannelOrder channelOrder = ChannelOrder::Rgb;
  float valueRange = 1.0f;                           // 255: the pixel values the mean and deviation are in are 0..255
  std::array<float, 3> mean{0.0f, 0.0f, 0.0f};       // per input channel, in the model's order
  std::array<float, 3> deviation{1.0f, 1.0f, 1.0f};  // per input channel, in the model's order

  // The input value of channel `channel` from the picture's value v in [0, 1]. With the defaults
  // of a gray model (range 1, mean 0, deviation 1) it is v to the bit, so the course's models
  // see exactly what they always saw.
  float scaled(float v, int channel) const {
    return (v * valueRange - mean[static_cast<size_t>(channel)]) / deviation[static_cast<size_t>(channel)];
  }
  // Range 1, mean 0, deviation 1: the picture's values are the input's.
  bool leavesValuesAsTheyAre() const {
    return valueRange == 1.0f && mean == std::array<float, 3>{0.0f, 0.0f, 0.0f} &&
           deviation == std::array<float, 3>{1.0f, 1.0f, 1.0f};
  }
  // The picture's channel that feeds input channel `channel` (of `channels`).
  int sourceChannel(int channel, int channels) const {
    return channelOrder == ChannelOrder::Bgr && channels == 3 ? 2 - channel : channel;
  }
};

// The rule for a model without one of its own: with one input channel, Fashion-MNIST's (fit,
// inverted when the background is light, values as they are); with three, ImageNet's as
// torchvision evaluates it (centre crop of 0.875, RGB, values in [0, 1], mean 0.485 0.456 0.406,
// deviation 0.229 0.224 0.225).
Preprocessing defaultPreprocessing(int channels);

// The card's "preprocessing" object (every field optional, the others from `base`):
//   "resize": "fit" | "centre-crop" | "stretch", "crop_fraction": (0, 1], "invert": "automatic" |
//   "always" | "never", "channel_order": "rgb" | "bgr", "value_range": > 0,
//   "mean": [1 or 3 numbers], "std": [1 or 3 numbers, each > 0]
// Throws convscope::Error naming `where` (the card's file), the field and what is wrong; an
// unknown field is refused too, since a misspelt one would be silently left at its default.
Preprocessing preprocessingFromJson(const nlohmann::json& json, const Preprocessing& base, const std::string& where);
nlohmann::json preprocessingToJson(const Preprocessing& preprocessing);

// One line for people: "centre crop 0.875, RGB, (x * 255 - 127) / 128" or "fit, inverted when
// the background is light, values as they are".
std::string describePreprocessing(const Preprocessing& preprocessing, int channels);

// The names used in cards and on the command line ("centre-crop", "bgr", "automatic"); the
// parsers return false for a name they do not know.
std::string framingName(PictureFraming framing);
bool parseFraming(const std::string& name, PictureFraming& framing);
bool parseChannelOrder(const std::string& name, ChannelOrder& order);
bool parseInversion(const std::string& name, PictureInversion& inversion);

}  // namespace convscope
