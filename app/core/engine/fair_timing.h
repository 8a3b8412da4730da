// The checker's half of timing a student's kernel fairly (docs/your-kernel.md, "How a kernel is
// timed"). The kernel runs in a child process; every timed repetition gets fresh inputs generated
// on the device from a seed of its own, and after the timed region the child copies the output to
// host memory and hands back the values at K positions that a host-side generator seeded by the
// parent picks (device code never sees that seed). The parent, which never runs the student's
// code, regenerates those inputs on the host, recomputes the K reference values in double and
// rejects the timing at the first wrong one: a kernel that replays a cached result, writes only on
// its first call or writes nothing is caught at the repetition where it did. A time below the
// physical floor (compulsory bytes over the memory bandwidth, FLOPs over the fastest arithmetic's
// peak) is flagged for review, not ranked. Plain host code: tested without a GPU.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/conv_problem.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/timing_inputs.h"

namespace convscope {

// The input seed of one timed repetition: a new one for every repetition of every layer and batch,
// from the run's seed (the parent's, fresh for each timing).
uint64_t repetitionInputSeed(uint64_t runSeed, int layer, int batch, int repetition);

// The `count` distinct output positions (flat NCHW indices, ascending) checked after a repetition:
// a host generator seeded by the parent's `sampleSeed` and the repetition's input seed. Every
// position when the output has no more than `count` elements.
std::vector<int64_t> sampledOutputPositions(uint64_t sampleSeed, uint64_t inputSeed, int64_t outputElements, int count);

// The double-precision reference of output element `position` of `problem` for the inputs of
// `inputSeed`, and the largest difference that passes there (as the check's: conv_check.h).
struct SampledReference {
  double expected = 0.0;
  double allowed = 0.0;
};
// `relativeTolerance` of the sum of the products' magnitudes is allowed: a student's kernel gets
// FP32's (kUserKernelRelativeTolerance); a course variant timed as a reference its own (TF32's is
// wider: variant_table.h, relativeTolerance).
SampledReference sampledReference(const ConvProblem& problem, uint64_t inputSeed, int64_t position,
                                  double relativeTolerance = kUserKernelRelativeTolerance);

// What the child sends back for one timed repetition.
struct TimedRepetition {
  int repetition = 0;
  uint64_t inputSeed = 0;
  double seconds = 0.0;  // from the device synchronised before the launch to synchronised after it
  std::vector<int64_t> positions;
  std::vector<float> values;  // the output at `positions`, copied after the timed region
};

// Empty when every sampled value of every repetition is right; else, in the student's terms and
// naming `studentFile`, the first repetition whose output was wrong. Positions other than those
// the parent asked for are refused too.
std::string checkTimedRepetitions(const ConvProblem& problem, const std::vector<TimedRepetition>& repetitions,
                                  uint64_t sampleSeed, int sampleCount, const std::string& studentFile,
                                  double relativeTolerance = kUserKernelRelativeTolerance);

// What the device can do at most: its memory bandwidth and the peak of the fastest arithmetic that
// can pass the check (a kernel may use tensor cores: 3xTF32 passes FP32's tolerance).
struct DevicePeaks {
  double bytesPerSecond = 0.0;
  double flopsPerSecond = 0.0;
  std::string source;  // where the figures come from
};
// Datasheet figures for the GPUs ConvScope is measured on (docs/performance.md); none for others.
std::optional<DevicePeaks> devicePeaksFor(const std::string& gpuName);

// The least time any kernel needs for `problem`: the larger of the compulsory bytes (input,
// weights, output once, 4 bytes each) over the bandwidth and the FLOPs over the peak.
double physicalFloorSeconds(const ConvProblem& problem, const DevicePeaks& peaks);

// One layer at one batch, timed fairly; what grade and the window read.
struct FairLayerTiming {
  std::string node;
  ConvProblem problem;
  SampleStats time;  // seconds: median, min, max of the timed repetitions (warm-up excluded)
  int repetitions = 0;
  std::string rejected;       // non-empty: the output of a repetition was wrong (the message); not ranked
  double floorSeconds = 0.0;  // 0 when the device's peaks are unknown
  // The median below the physical floor: "below the physical floor: flagged for review", not ranked.
  bool belowPhysicalFloor = false;
  bool ranked() const { return rejected.empty() && !belowPhysicalFloor && repetitions > 0; }
};

// Fills `layer.time`, `repetitions`, `rejected`, `floorSeconds` and `belowPhysicalFloor` from the
// child's repetitions: the parent's whole verdict on one layer and batch.
void judgeLayerTiming(FairLayerTiming& layer, const std::vector<TimedRepetition>& repetitions, uint64_t sampleSeed,
                      int sampleCount, const std::optional<DevicePeaks>& peaks, const std::string& studentFile,
                      double relativeTolerance = kUserKernelRelativeTolerance);

// The child's repetitions as JSON and back: values as their 32 bits (the poison and NaN are no JSON
// numbers). Reading throws nlohmann::json::exception on a malformed entry.
nlohmann::json timedRepetitionsToJson(const std::vector<TimedRepetition>& repetitions);
std::vector<TimedRepetition> timedRepetitionsFromJson(const nlohmann::json& json);

// One layer's verdict for `kernel check --json`, grade and the window (docs/your-kernel.md).
nlohmann::json fairLayerTimingToJson(const FairLayerTiming& layer, int batch);

}  // namespace convscope
