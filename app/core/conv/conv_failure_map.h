// Where a student's kernel is wrong (docs/your-kernel.md, "Where it is wrong"): for one output map
// (one image, one output channel) of the shape that failed the check, the expected values, the
// kernel's values and a verdict per element, with counts, the worst elements and the rows and
// columns that hold them as ranges. The pattern (every row past the 8th of each tile, the left
// border, every output of a strided layer) is what tells a student which index expression is
// wrong. Plain data, no Qt: the CLI prints it, --json writes it and the window draws it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "app/core/conv/conv_problem.h"

namespace convscope {

// The check fills the output with this NaN before the kernel runs; an element that still holds
// these exact bits was never written. A NaN the kernel computes has other bits (the GPU's
// canonical NaN is 0x7fffffff), so the two are told apart.
inline constexpr uint32_t kUnwrittenPoisonBits = 0x7fc0dead;
float unwrittenPoison();
bool isUnwrittenPoison(float value);

enum class ElementVerdict : uint8_t {
  Ok,            // within the tolerance
  Wrong,         // a number, off by more than the tolerance (infinity included)
  NeverWritten,  // the poison is still there
  NotANumber,    // the kernel wrote NaN
};
const char* verdictName(ElementVerdict verdict);  // "ok", "wrong", "never written", "NaN"

struct FailingElement {
  int h = 0, w = 0;  // in the output map
  double expected = 0.0;
  float got = 0.0f;
  double allowed = 0.0;  // the largest difference that passes there
  ElementVerdict verdict = ElementVerdict::Wrong;
};

struct ConvFailureMap {
  ConvProblem problem;  // the shape that failed
  int n = 0, m = 0;     // the map shown: image n, output channel m
  int height = 0, width = 0;
  std::vector<double> expected;  // row-major, height x width
  std::vector<float> actual;
  std::vector<ElementVerdict> verdicts;
  int wrong = 0, neverWritten = 0, notANumber = 0;
  int total() const { return height * width; }
  int bad() const { return wrong + neverWritten + notANumber; }
  // The worst bad elements: numbers by |got - expected| (largest first), then NaNs, then never
  // written elements, each group in row-major order. At most the count asked of classifyOutputMap.
  std::vector<FailingElement> worst;
  // The bad elements of the whole shape, every image and output channel.
  int64_t shapeBad = 0, shapeTotal = 0;

  ElementVerdict at(int h, int w) const { return verdicts[static_cast<size_t>(h) * width + w]; }
  // "8-15, 24-31", "all" or "none": the rows (columns) that hold at least one bad element.
  std::string badRows() const;
  std::string badColumns() const;
  // Several lines for people: counts, "rows 8-15; all columns", the worst elements.
  std::string text() const;
};

// Classifies every element of one output map. `expected`, `allowed` and `actual` are row-major
// height x width. An element passes when |actual - expected| <= allowed (so NaN and infinity fail).
ConvFailureMap classifyOutputMap(const ConvProblem& problem, int n, int m, int height, int width,
                                 const std::vector<double>& expected, const std::vector<double>& allowed,
                                 const std::vector<float>& actual, int worstCount = 10);

// The map as JSON (the schema: docs/your-kernel.md, "kernel check --json") and back. NaN is not a
// JSON number: an actual value that is NaN is null (its verdict says which NaN it was).
nlohmann::json failureMapToJson(const ConvFailureMap& map);
ConvFailureMap failureMapFromJson(const nlohmann::json& json);  // throws nlohmann::json::exception

// The indices whose flag is set, as ranges: {0,1,1,1,0,1} -> "1-3, 5"; every flag set -> "all";
// none -> "none".
std::string describeIndexRanges(const std::vector<bool>& flagged);

}  // namespace convscope
