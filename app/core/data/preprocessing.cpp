#include "app/core/data/preprocessing.h"

#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "app/core/util/error.h"

namespace convscope {
namespace {

template <typename Enum>
struct Named {
  const char* name;
  Enum value;
};

constexpr Named<PictureFraming> kFramings[] = {
    {"fit", PictureFraming::Fit}, {"centre-crop", PictureFraming::CentreCrop}, {"stretch", PictureFraming::Stretch}};
constexpr Named<ChannelOrder> kOrders[] = {{"rgb", ChannelOrder::Rgb}, {"bgr", ChannelOrder::Bgr}};
constexpr Named<PictureInversion> kInversions[] = {{"automatic", PictureInversion::Automatic},
                                                   {"always", PictureInversion::Always},
                                                   {"never", PictureInversion::Never}};

template <typename Enum, size_t N>
bool parseNamed(const Named<Enum> (&names)[N], const std::string& text, Enum& value) {
  for (const Named<Enum>& n : names)
    if (text == n.name) return value = n.value, true;
  return false;
}

template <typename Enum, size_t N>
std::string nameOf(const Named<Enum> (&names)[N], Enum value) {
  for (const Named<Enum>& n : names)
    if (n.value == value) return n.name;
  return "?";
}

template <typename Enum, size_t N>
std::string choices(const Named<Enum> (&names)[N]) {
  std::string text;
  for (size_t i = 0; i < N; ++i)
    text += (i == 0 ? "\"" : i + 1 == N ? " or \"" : ", \"") + std::string(names[i].name) + "\"";
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

Preprocessing defaultPreprocessing(int channels) {
  Preprocessing p;
  if (channels == 3) {
    p.framing = PictureFraming::CentreCrop;
    p.inversion = PictureInversion::Never;
    p.mean = {0.485f, 0.456f, 0.406f};
    p.deviation = {0.229f, 0.224f, 0.225f};
  }
  return p;
}

std::string framingName(PictureFraming framing) {
  return nameOf(kFramings, framing);
}
bool parseFraming(const std::string& name, PictureFraming& framing) {
  return parseNamed(kFramings, name, framing);
}
bool parseChannelOrder(const std::string& name, ChannelOrder& order) {
  return parseNamed(kOrders, name, order);
}
bool parseInversion(const std::string& name, PictureInversion& inversion) {
  return parseNamed(kInversions, name, inversion);
}

Preprocessing preprocessingFromJson(const nlohmann::json& json, const Preprocessing& base, const std::string& where) {
  const std::string problem = where + ": malformed \"preprocessing\": ";
  if (!json.is_object()) throw Error(problem + "it is not an object of fields (\"resize\", \"mean\", ...)");
  static const std::set<std::string> kFields = {"resize",      "crop_fraction", "invert", "channel_order",
                                                "value_range", "mean",          "std"};
  for (const auto& [key, value] : json.items())
    if (!kFields.count(key))
      throw Error(problem + "unknown field \"" + key +
                  "\" (the fields are resize, crop_fraction, invert, channel_order, value_range, mean, std)");
  Preprocessing p = base;
  const auto name = [&](const char* field) {
    const nlohmann::json& v = json.at(field);
    if (!v.is_string()) throw Error(problem + "\"" + field + "\" is not a name");
    return v.get<std::string>();
  };
  const auto positive = [&](const nlohmann::json& v, const std::string& field) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0.0)
      throw Error(problem + "\"" + field + "\" is " + v.dump() + "; it must be a number above 0");
    return v.get<double>();
  };
  if (json.contains("resize") && !parseFraming(name("resize"), p.framing))
    throw Error(problem + "\"resize\" is \"" + name("resize") + "\"; it is one of " + choices(kFramings));
  if (json.contains("invert") && !parseInversion(name("invert"), p.inversion))
    throw Error(problem + "\"invert\" is \"" + name("invert") + "\"; it is one of " + choices(kInversions));
  if (json.contains("channel_order") && !parseChannelOrder(name("channel_order"), p.channelOrder))
    throw Error(problem + "\"channel_order\" is \"" + name("channel_order") + "\"; it is one of " + choices(kOrders));
  if (json.contains("crop_fraction")) {
    p.cropFraction = positive(json.at("crop_fraction"), "crop_fraction");
    if (p.cropFraction > 1.0)
      throw Error(problem + "\"crop_fraction\" is " + number(p.cropFraction) +
                  "; it is the part of the resized picture kept, at most 1");
  }
  if (json.contains("value_range")) p.valueRange = static_cast<float>(positive(json.at("value_range"), "value_range"));
  for (const auto& [field, values, mustBePositive] :
       {std::tuple{"mean", &p.mean, false}, std::tuple{"std", &p.deviation, true}}) {
    if (!json.contains(field)) continue;
    const nlohmann::json& list = json.at(field);
    if (!list.is_array() || (list.size() != 1 && list.size() != 3))
      throw Error(problem + "\"" + field + "\" is " + list.dump() +
                  "; it is a list of 1 or 3 numbers (one per channel)");
    for (size_t c = 0; c < 3; ++c) {
      const nlohmann::json& v = list.at(list.size() == 1 ? 0 : c);
      if (mustBePositive)
        (*values)[c] = static_cast<float>(positive(v, std::string(field) + "[" + std::to_string(c) + "]"));
      else if (!v.is_number() || !std::isfinite(v.get<double>()))
        throw Error(problem + "\"" + field + "\" holds " + v.dump() + ", which is not a number");
      else
        (*values)[c] = v.get<float>();
    }
  }
  return p;
}

nlohmann::json preprocessingToJson(const Preprocessing& p) {
  return {{"resize", framingName(p.framing)},
          {"crop_fraction", p.cropFraction},
          {"invert", nameOf(kInversions, p.inversion)},
          {"channel_order", nameOf(kOrders, p.channelOrder)},
          {"value_range", p.valueRange},
          {"mean", p.mean},
          {"std", p.deviation}};
}

std::string describePreprocessing(const Preprocessing& p, int channels) {
  std::string text =
      p.framing == PictureFraming::CentreCrop ? "centre crop " + number(p.cropFraction) : framingName(p.framing);
  if (p.inversion == PictureInversion::Automatic) text += ", inverted when the background is light";
  if (p.inversion == PictureInversion::Always) text += ", inverted";
  if (channels == 3) text += p.channelOrder == ChannelOrder::Bgr ? ", BGR" : ", RGB";
  const auto perChannel = [channels](const std::array<float, 3>& v) {
    if (channels == 1 || (v[0] == v[1] && v[1] == v[2])) return number(v[0]);
    return "(" + number(v[0]) + " " + number(v[1]) + " " + number(v[2]) + ")";
  };
  if (p.leavesValuesAsTheyAre()) return text + ", values as they are (0 to 1)";
  const std::string x = p.valueRange == 1.0f ? "x" : "x * " + number(p.valueRange);
  return text + ", (" + x + " - " + perChannel(p.mean) + ") / " + perChannel(p.deviation);
}

}  // namespace convscope
