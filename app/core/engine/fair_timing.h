// The checker's half of timing a student's kernel fairly (docs/your-kernel.md, "How a kernel is
// timed"). The kernel runs in a child process; every timed repetition gets fresh inputs generated
// on the device from a seed of its own. After each timed repetition the child (ConvScope's code,
// run only once the kernel's launch has ended and the device is synchronised) does two checks:
//  - the whole output: every element is compared on the device with a double-precision reference
//    computed there and then from inputs regenerated from the repetition's seed (whatever the
//    kernel did to its input buffers), within the tolerance below; nothing of the reference is in
//    device memory while a kernel runs; the outcome (how many wrong, the first) comes back;
//  - K sampled positions: a host-side generator seeded by the parent picks them (device code never
//    sees that seed) and their values come back; the parent, which never runs the student's code,
//    regenerates those inputs on the host and recomputes the K references in double itself.
// The parent rejects the timing at the first repetition either check finds wrong: a kernel that
// replays a cached result, writes only on its first call, skips a few outputs or writes nothing
// is caught at the repetition where it did. A time below the physical floor (compulsory bytes
// over the device's peak memory bandwidth, FLOPs over its fastest arithmetic's peak: gpu_platform.h)
// is flagged for review, not ranked. Plain host code: tested without a GPU.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/conv_problem.h"
#include "app/core/device/gpu_platform.h"
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

// The child's comparison of a repetition's whole output (every element, against sampledReference's
// value and tolerance, computed on the device after the launch ended).
struct WholeOutputCheck {
  bool checked = false;          // false: the child did not compare the whole output
  double relativeTolerance = 0;  // the tolerance it compared with
  int64_t wrong = 0;             // elements outside it (NaN and never written included)
  int64_t firstWrong = -1;       // the smallest wrong flat NCHW index; -1 when none is wrong
  float firstWrongValue = 0.0f;  // the kernel's output there
};

// What the child sends back for one timed repetition.
struct TimedRepetition {
  int repetition = 0;
  uint64_t inputSeed = 0;
  double seconds = 0.0;  // from the device synchronised before the launch to synchronised after it
  std::vector<int64_t> positions;
  std::vector<float> values;  // the output at `positions`, copied after the timed region
  WholeOutputCheck whole;
};

// Empty when every sampled value of every repetition is right and every repetition's whole output
// was checked and right; else, in the student's terms and naming `studentFile`, the first
// repetition whose output was wrong (the first wrong element, its expected value from the
// parent's own reference, and how many were wrong). Positions other than those the parent asked
// for, a whole output not checked or checked at a wider tolerance than `relativeTolerance` are
// refused too.
std::string checkTimedRepetitions(const ConvProblem& problem, const std::vector<TimedRepetition>& repetitions,
                                  uint64_t sampleSeed, int sampleCount, const std::string& studentFile,
                                  double relativeTolerance = kUserKernelRelativeTolerance);

// What the device can do at most (DevicePeaks: gpu_platform.h) comes from its figures: in the
// child's JSON (devicePeaksFromJson of its "device" object, deviceFiguresToJson) or of this
// machine's GPU (devicePeaksOf(localDeviceFigures())).
//
// Deprecated: the peaks of this machine's GPU when `gpuName` is its name, else none. Kept until
// its last callers read the device's figures instead; no table of GPU names behind it.
// clang-format off
[[deprecated("use devicePeaksFromJson(the child's device JSON) or devicePeaksOf(localDeviceFigures())")]]
std::optional<DevicePeaks> devicePeaksFor(const std::string& gpuName);
// clang-format on

// The least time any kernel needs for `problem`: the larger of the compulsory bytes (input,
// weights, output once, 4 bytes each) over the bandwidth and the FLOPs over the peak (a part whose
// peak is unknown, 0, is left out).
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
// numbers); the whole output's check as "whole_output" (an entry without one reads as not
// checked). Reading throws nlohmann::json::exception on a malformed entry.
nlohmann::json timedRepetitionsToJson(const std::vector<TimedRepetition>& repetitions);
std::vector<TimedRepetition> timedRepetitionsFromJson(const nlohmann::json& json);

// One layer's verdict for `kernel check --json`, grade and the window (docs/your-kernel.md).
nlohmann::json fairLayerTimingToJson(const FairLayerTiming& layer, int batch);

}  // namespace convscope
