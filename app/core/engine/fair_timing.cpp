#include "app/core/engine/fair_timing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/conv_failure_map.h"
#include "app/core/device/gpu_platform.h"

namespace convscope {

using nlohmann::json;

uint64_t repetitionInputSeed(uint64_t runSeed, int layer, int batch, int repetition) {
  uint64_t seed = mixBits(runSeed);
  for (const int part : {layer, batch, repetition}) seed = mixBits(seed ^ static_cast<uint64_t>(part));
  return seed;
}

std::vector<int64_t> sampledOutputPositions(uint64_t sampleSeed, uint64_t inputSeed, int64_t outputElements,
                                            int count) {
  std::vector<int64_t> positions;
  if (outputElements <= 0 || count <= 0) return positions;
  if (outputElements <= count) {
    for (int64_t i = 0; i < outputElements; ++i) positions.push_back(i);
    return positions;
  }
  std::mt19937_64 rng(mixBits(sampleSeed) ^ inputSeed);
  std::uniform_int_distribution<int64_t> pick(0, outputElements - 1);
  std::set<int64_t> chosen;
  while (static_cast<int>(chosen.size()) < count) chosen.insert(pick(rng));
  return {chosen.begin(), chosen.end()};
}

SampledReference sampledReference(const ConvProblem& p, uint64_t inputSeed, int64_t position,
                                  double relativeTolerance) {
  const int64_t width = p.outWidth(), height = p.outHeight();
  const int64_t w = position % width, h = position / width % height;
  const int64_t m = position / (width * height) % p.outChannels, n = position / (width * height * p.outChannels);
  const uint64_t weightSeed = timingWeightSeed(inputSeed);
  // Output channel m reads the input channels of its group (conv_problem.h); dilation spaces the taps.
  const int64_t perGroup = p.inChannelsPerGroup(), firstChannel = m / p.outChannelsPerGroup() * perGroup;
  double sum = 0.0, magnitude = 0.0;
  for (int64_t c = 0; c < perGroup; ++c)
    for (int64_t i = 0; i < p.kernelHeight; ++i)
      for (int64_t j = 0; j < p.kernelWidth; ++j) {
        const int64_t y = h * p.strideHeight - p.padTop + i * p.dilationHeight;
        const int64_t x = w * p.strideWidth - p.padLeft + j * p.dilationWidth;
        if (y < 0 || y >= p.inHeight || x < 0 || x >= p.inWidth) continue;
        const uint64_t inputIndex =
            static_cast<uint64_t>(((n * p.inChannels + firstChannel + c) * p.inHeight + y) * p.inWidth + x);
        const uint64_t weightIndex =
            static_cast<uint64_t>(((m * perGroup + c) * p.kernelHeight + i) * p.kernelWidth + j);
        const double product =
            double{timingInputValue(inputSeed, inputIndex)} * double{timingInputValue(weightSeed, weightIndex)};
        sum += product;
        magnitude += std::fabs(product);
      }
  return {sum, relativeTolerance * magnitude + 1e-30};
}

namespace {

// "output [n=..][m=..][h=..][w=..]: expected E, got G[, never written | , NaN]"
std::string wrongElement(const ConvProblem& problem, int64_t position, double expected, float got) {
  const int64_t width = problem.outWidth(), height = problem.outHeight();
  std::ostringstream text;
  text.precision(9);
  text << "output [n=" << position / (width * height * problem.outChannels)
       << "][m=" << position / (width * height) % problem.outChannels << "][h=" << position / width % height
       << "][w=" << position % width << "]: expected " << expected << ", got " << got;
  if (isUnwrittenPoison(got))
    text << ", never written";
  else if (std::isnan(got))
    text << ", NaN";
  return text.str();
}

}  // namespace

std::string checkTimedRepetitions(const ConvProblem& problem, const std::vector<TimedRepetition>& repetitions,
                                  uint64_t sampleSeed, int sampleCount, const std::string& studentFile,
                                  double relativeTolerance) {
  const int64_t outputs = problem.outputElements();
  for (const TimedRepetition& r : repetitions) {
    std::ostringstream where;
    where << studentFile << ": its output at repetition " << r.repetition + 1 << " of " << problem.describe();
    const std::vector<int64_t> asked = sampledOutputPositions(sampleSeed, r.inputSeed, outputs, sampleCount);
    if (r.positions != asked || r.values.size() != asked.size())
      return where.str() + " came back without the values asked for: the timing is not accepted";
    for (size_t i = 0; i < asked.size(); ++i) {
      const SampledReference reference = sampledReference(problem, r.inputSeed, asked[i], relativeTolerance);
      const float got = r.values[i];
      // Written so that NaN fails: the comparison is false for it.
      if (std::fabs(double{got} - reference.expected) <= reference.allowed) continue;
      return where.str() + " was wrong: a kernel must compute every call (" +
             wrongElement(problem, asked[i], reference.expected, got) + ")";
    }
    // The whole output, as the child compared it once the launch had ended.
    const WholeOutputCheck& whole = r.whole;
    if (!whole.checked) return where.str() + " came back without its whole output checked: the timing is not accepted";
    if (!(whole.relativeTolerance <= relativeTolerance * (1.0 + 1e-9)))
      return where.str() + " was checked at a wider tolerance than asked for: the timing is not accepted";
    if (whole.wrong == 0 && whole.firstWrong < 0) continue;
    if (whole.wrong <= 0 || whole.wrong > outputs || whole.firstWrong < 0 || whole.firstWrong >= outputs)
      return where.str() + " came back with a malformed check of its whole output: the timing is not accepted";
    // The parent's own reference at the first wrong element: the message's figures are not the child's.
    const SampledReference reference = sampledReference(problem, r.inputSeed, whole.firstWrong, relativeTolerance);
    if (std::fabs(double{whole.firstWrongValue} - reference.expected) <= reference.allowed)
      return where.str() + " came back with a check of its whole output that does not hold: the timing is not accepted";
    std::ostringstream count;
    count << whole.wrong << " of " << outputs << " outputs wrong; the first: ";
    return where.str() + " was wrong: a kernel must compute every output of every call (" + count.str() +
           wrongElement(problem, whole.firstWrong, reference.expected, whole.firstWrongValue) + ")";
  }
  return {};
}

std::optional<DevicePeaks> devicePeaksFor(const std::string& gpuName) {
  const DeviceFigures local = deviceFiguresOf(gpuInfo());
  if (local.name.empty() || local.name != gpuName) return std::nullopt;
  return devicePeaksOf(localDeviceFigures());
}

double physicalFloorSeconds(const ConvProblem& p, const DevicePeaks& peaks) {
  const double bytes = 4.0 * static_cast<double>(p.inputElements() + p.weightElements() + p.outputElements());
  const double byBandwidth = peaks.bytesPerSecond > 0.0 ? bytes / peaks.bytesPerSecond : 0.0;
  const double byArithmetic = peaks.flopsPerSecond > 0.0 ? static_cast<double>(p.flops()) / peaks.flopsPerSecond : 0.0;
  return std::max(byBandwidth, byArithmetic);
}

void judgeLayerTiming(FairLayerTiming& layer, const std::vector<TimedRepetition>& repetitions, uint64_t sampleSeed,
                      int sampleCount, const std::optional<DevicePeaks>& peaks, const std::string& studentFile,
                      double relativeTolerance) {
  layer.repetitions = static_cast<int>(repetitions.size());
  std::vector<double> seconds;
  for (const TimedRepetition& r : repetitions) seconds.push_back(r.seconds);
  layer.time = seconds.empty() ? SampleStats{} : SampleStats::of(seconds);
  layer.rejected =
      checkTimedRepetitions(layer.problem, repetitions, sampleSeed, sampleCount, studentFile, relativeTolerance);
  layer.floorSeconds = peaks ? physicalFloorSeconds(layer.problem, *peaks) : 0.0;
  layer.belowPhysicalFloor =
      layer.floorSeconds > 0.0 && layer.repetitions > 0 && layer.time.median < layer.floorSeconds;
}

json timedRepetitionsToJson(const std::vector<TimedRepetition>& repetitions) {
  json all = json::array();
  for (const TimedRepetition& r : repetitions) {
    json bits = json::array();
    for (const float v : r.values) {
      uint32_t word = 0;
      std::memcpy(&word, &v, sizeof word);
      bits.push_back(word);
    }
    json whole = {{"checked", r.whole.checked}};
    if (r.whole.checked) {
      uint32_t first = 0;
      std::memcpy(&first, &r.whole.firstWrongValue, sizeof first);
      whole.update({{"relative_tolerance", r.whole.relativeTolerance},
                    {"wrong", r.whole.wrong},
                    {"first_wrong", r.whole.firstWrong >= 0 ? json(r.whole.firstWrong) : json(nullptr)},
                    {"first_wrong_value_bits", first}});
    }
    all.push_back({{"repetition", r.repetition},
                   {"input_seed", r.inputSeed},
                   {"seconds", r.seconds},
                   {"positions", r.positions},
                   {"value_bits", bits},
                   {"whole_output", whole}});
  }
  return all;
}

std::vector<TimedRepetition> timedRepetitionsFromJson(const json& j) {
  std::vector<TimedRepetition> repetitions;
  for (const json& e : j) {
    TimedRepetition r;
    r.repetition = e.at("repetition").get<int>();
    r.inputSeed = e.at("input_seed").get<uint64_t>();
    r.seconds = e.at("seconds").get<double>();
    r.positions = e.at("positions").get<std::vector<int64_t>>();
    for (const json& word : e.at("value_bits")) {
      const uint32_t bits = word.get<uint32_t>();
      float v = 0.0f;
      std::memcpy(&v, &bits, sizeof v);
      r.values.push_back(v);
    }
    if (const auto whole = e.find("whole_output"); whole != e.end() && whole->at("checked").get<bool>()) {
      r.whole.checked = true;
      r.whole.relativeTolerance = whole->at("relative_tolerance").get<double>();
      r.whole.wrong = whole->at("wrong").get<int64_t>();
      const json& first = whole->at("first_wrong");
      r.whole.firstWrong = first.is_null() ? -1 : first.get<int64_t>();
      const uint32_t bits = whole->at("first_wrong_value_bits").get<uint32_t>();
      std::memcpy(&r.whole.firstWrongValue, &bits, sizeof bits);
    }
    repetitions.push_back(std::move(r));
  }
  return repetitions;
}

json fairLayerTimingToJson(const FairLayerTiming& layer, int batch) {
  return {{"node", layer.node},
          {"batch", batch},
          {"problem", convProblemToJson(layer.problem)},
          {"repetitions", layer.repetitions},
          {"median_s", layer.time.median},
          {"min_s", layer.time.min},
          {"max_s", layer.time.max},
          {"rejected", layer.rejected.empty() ? json(nullptr) : json(layer.rejected)},
          {"floor_s", layer.floorSeconds > 0.0 ? json(layer.floorSeconds) : json(nullptr)},
          {"below_physical_floor", layer.belowPhysicalFloor},
          {"flag", layer.belowPhysicalFloor ? json("below the physical floor: flagged for review") : json(nullptr)},
          {"ranked", layer.ranked()}};
}

}  // namespace convscope
