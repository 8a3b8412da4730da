#include "app/core/conv/conv_failure_map.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace convscope {

float unwrittenPoison() {
  return std::bit_cast<float>(kUnwrittenPoisonBits);
}

bool isUnwrittenPoison(float value) {
  return std::bit_cast<uint32_t>(value) == kUnwrittenPoisonBits;
}

const char* verdictName(ElementVerdict verdict) {
  switch (verdict) {
    case ElementVerdict::Ok:
      return "ok";
    case ElementVerdict::Wrong:
      return "wrong";
    case ElementVerdict::NeverWritten:
      return "never written";
    case ElementVerdict::NotANumber:
      return "NaN";
  }
  return "?";
}

std::string describeIndexRanges(const std::vector<bool>& flagged) {
  if (!flagged.empty() && std::all_of(flagged.begin(), flagged.end(), [](bool f) { return f; })) return "all";
  std::string text;
  for (size_t i = 0; i < flagged.size();) {
    if (!flagged[i]) {
      ++i;
      continue;
    }
    size_t last = i;
    while (last + 1 < flagged.size() && flagged[last + 1]) ++last;
    if (!text.empty()) text += ", ";
    text += std::to_string(i);
    if (last > i) text.append("-").append(std::to_string(last));
    i = last + 1;
  }
  return text.empty() ? "none" : text;
}

std::string ConvFailureMap::badRows() const {
  std::vector<bool> rows(static_cast<size_t>(height), false);
  for (int h = 0; h < height; ++h)
    for (int w = 0; w < width; ++w)
      if (at(h, w) != ElementVerdict::Ok) rows[static_cast<size_t>(h)] = true;
  return describeIndexRanges(rows);
}

std::string ConvFailureMap::badColumns() const {
  std::vector<bool> columns(static_cast<size_t>(width), false);
  for (int h = 0; h < height; ++h)
    for (int w = 0; w < width; ++w)
      if (at(h, w) != ElementVerdict::Ok) columns[static_cast<size_t>(w)] = true;
  return describeIndexRanges(columns);
}

std::string ConvFailureMap::text() const {
  std::ostringstream out;
  out.precision(9);
  out << "output map image " << n << ", channel " << m << " (" << height << "x" << width << ") of "
      << problem.describe() << ": " << bad() << " of " << total() << " elements bad (" << wrong << " wrong, "
      << neverWritten << " never written, " << notANumber << " NaN)\n";
  const std::string rows = badRows(), columns = badColumns();
  out << "  where: " << (rows == "all" ? "all rows" : "rows " + rows) << "; "
      << (columns == "all" ? "all columns" : "columns " + columns) << "\n";
  if (shapeTotal > 0) out << "  the whole shape: " << shapeBad << " of " << shapeTotal << " elements bad\n";
  for (const FailingElement& e : worst) {
    out << "  [h=" << e.h << "][w=" << e.w << "] " << verdictName(e.verdict) << ": expected " << e.expected;
    if (e.verdict == ElementVerdict::NeverWritten)
      out << ", never written";
    else
      out << ", got " << e.got;
    if (e.verdict == ElementVerdict::Wrong) out << " (allowed difference " << e.allowed << ")";
    out << "\n";
  }
  return out.str();
}

ConvFailureMap classifyOutputMap(const ConvProblem& problem, int n, int m, int height, int width,
                                 const std::vector<double>& expected, const std::vector<double>& allowed,
                                 const std::vector<float>& actual, int worstCount) {
  ConvFailureMap map;
  map.problem = problem;
  map.n = n;
  map.m = m;
  map.height = height;
  map.width = width;
  map.expected = expected;
  map.actual = actual;
  const size_t count = static_cast<size_t>(height) * width;
  map.verdicts.assign(count, ElementVerdict::Ok);
  std::vector<FailingElement> numbers, nans, unwritten;
  for (size_t i = 0; i < count; ++i) {
    const float got = actual[i];
    ElementVerdict verdict = ElementVerdict::Ok;
    if (isUnwrittenPoison(got))
      verdict = ElementVerdict::NeverWritten;
    else if (std::isnan(got))
      verdict = ElementVerdict::NotANumber;
    else if (!(std::fabs(double{got} - expected[i]) <= allowed[i]))
      verdict = ElementVerdict::Wrong;
    map.verdicts[i] = verdict;
    if (verdict == ElementVerdict::Ok) continue;
    const FailingElement element{
        static_cast<int>(i / width), static_cast<int>(i % width), expected[i], got, allowed[i], verdict};
    switch (verdict) {
      case ElementVerdict::Wrong:
        ++map.wrong;
        numbers.push_back(element);
        break;
      case ElementVerdict::NeverWritten:
        ++map.neverWritten;
        unwritten.push_back(element);
        break;
      default:
        ++map.notANumber;
        nans.push_back(element);
        break;
    }
  }
  // Largest difference first; infinity sorts first; ties stay in row-major order.
  std::stable_sort(numbers.begin(), numbers.end(), [](const FailingElement& a, const FailingElement& b) {
    return std::fabs(double{a.got} - a.expected) > std::fabs(double{b.got} - b.expected);
  });
  for (const auto* group : {&numbers, &nans, &unwritten})
    for (const FailingElement& e : *group)
      if (static_cast<int>(map.worst.size()) < worstCount) map.worst.push_back(e);
  return map;
}

namespace {

using nlohmann::json;

json problemToJson(const ConvProblem& p) {
  return {{"batch", p.batch},
          {"inChannels", p.inChannels},
          {"inHeight", p.inHeight},
          {"inWidth", p.inWidth},
          {"outChannels", p.outChannels},
          {"kernelHeight", p.kernelHeight},
          {"kernelWidth", p.kernelWidth},
          {"strideHeight", p.strideHeight},
          {"strideWidth", p.strideWidth},
          {"padTop", p.padTop},
          {"padLeft", p.padLeft},
          {"padBottom", p.padBottom},
          {"padRight", p.padRight},
          {"text", p.describe()}};
}

ConvProblem problemFromJson(const json& j) {
  ConvProblem p;
  p.batch = j.at("batch").get<int>();
  p.inChannels = j.at("inChannels").get<int>();
  p.inHeight = j.at("inHeight").get<int>();
  p.inWidth = j.at("inWidth").get<int>();
  p.outChannels = j.at("outChannels").get<int>();
  p.kernelHeight = j.at("kernelHeight").get<int>();
  p.kernelWidth = j.at("kernelWidth").get<int>();
  p.strideHeight = j.at("strideHeight").get<int>();
  p.strideWidth = j.at("strideWidth").get<int>();
  p.padTop = j.at("padTop").get<int>();
  p.padLeft = j.at("padLeft").get<int>();
  p.padBottom = j.at("padBottom").get<int>();
  p.padRight = j.at("padRight").get<int>();
  return p;
}

json valueToJson(float value) {
  return std::isfinite(value) ? json(value) : std::isinf(value) ? json(value > 0 ? "inf" : "-inf") : json(nullptr);
}

float valueFromJson(const json& j, ElementVerdict verdict) {
  if (j.is_number()) return j.get<float>();
  if (j.is_string())
    return j.get<std::string>() == "inf" ? std::numeric_limits<float>::infinity()
                                         : -std::numeric_limits<float>::infinity();
  return verdict == ElementVerdict::NeverWritten ? unwrittenPoison() : std::numeric_limits<float>::quiet_NaN();
}

ElementVerdict verdictFromName(const std::string& name) {
  for (ElementVerdict v :
       {ElementVerdict::Ok, ElementVerdict::Wrong, ElementVerdict::NeverWritten, ElementVerdict::NotANumber})
    if (name == verdictName(v)) return v;
  throw json::other_error::create(501, "unknown verdict '" + name + "'", nullptr);
}

}  // namespace

json failureMapToJson(const ConvFailureMap& map) {
  json worst = json::array();
  for (const FailingElement& e : map.worst)
    worst.push_back({{"h", e.h},
                     {"w", e.w},
                     {"expected", e.expected},
                     {"got", valueToJson(e.got)},
                     {"allowed", e.allowed},
                     {"verdict", verdictName(e.verdict)}});
  json actual = json::array(), verdicts = json::array();
  for (size_t i = 0; i < map.actual.size(); ++i) {
    actual.push_back(valueToJson(map.actual[i]));
    verdicts.push_back(static_cast<int>(map.verdicts[i]));
  }
  return {{"shape", problemToJson(map.problem)},
          {"n", map.n},
          {"m", map.m},
          {"height", map.height},
          {"width", map.width},
          {"counts",
           {{"wrong", map.wrong},
            {"neverWritten", map.neverWritten},
            {"nan", map.notANumber},
            {"bad", map.bad()},
            {"total", map.total()}}},
          {"shapeBad", map.shapeBad},
          {"shapeTotal", map.shapeTotal},
          {"badRows", map.badRows()},
          {"badColumns", map.badColumns()},
          {"worst", worst},
          {"expected", map.expected},
          {"actual", actual},
          {"verdicts", verdicts}};
}

ConvFailureMap failureMapFromJson(const json& j) {
  ConvFailureMap map;
  map.problem = problemFromJson(j.at("shape"));
  map.n = j.at("n").get<int>();
  map.m = j.at("m").get<int>();
  map.height = j.at("height").get<int>();
  map.width = j.at("width").get<int>();
  const size_t count = static_cast<size_t>(map.height) * map.width;
  map.expected = j.at("expected").get<std::vector<double>>();
  const json& verdicts = j.at("verdicts");
  const json& actual = j.at("actual");
  if (map.expected.size() != count || verdicts.size() != count || actual.size() != count)
    throw json::other_error::create(501, "the map's arrays do not hold height x width values", nullptr);
  for (size_t i = 0; i < count; ++i) {
    const int code = verdicts[i].get<int>();
    if (code < 0 || code > static_cast<int>(ElementVerdict::NotANumber))
      throw json::other_error::create(501, "unknown verdict code " + std::to_string(code), nullptr);
    map.verdicts.push_back(static_cast<ElementVerdict>(code));
    map.actual.push_back(valueFromJson(actual[i], map.verdicts.back()));
  }
  const json& counts = j.at("counts");
  map.wrong = counts.at("wrong").get<int>();
  map.neverWritten = counts.at("neverWritten").get<int>();
  map.notANumber = counts.at("nan").get<int>();
  map.shapeBad = j.value("shapeBad", int64_t{0});
  map.shapeTotal = j.value("shapeTotal", int64_t{0});
  for (const json& e : j.at("worst")) {
    FailingElement element;
    element.h = e.at("h").get<int>();
    element.w = e.at("w").get<int>();
    element.expected = e.at("expected").get<double>();
    element.allowed = e.at("allowed").get<double>();
    element.verdict = verdictFromName(e.at("verdict").get<std::string>());
    element.got = valueFromJson(e.at("got"), element.verdict);
    map.worst.push_back(element);
  }
  return map;
}

}  // namespace convscope
