// The check a student's kernel passes before ConvScope times it (docs/your-kernel.md): the
// kernel against a double-precision loop on fresh random shapes, with the output poisoned (a NaN
// with its own bits, conv_failure_map.h) first so that an element the kernel never writes fails
// and is told from a NaN it computed, and NaN never passes. The first wrong
// element is reported with its coordinates and both values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/conv_failure_map.h"
#include "app/core/conv/conv_problem.h"

namespace convscope {

struct ConvMismatch {
  ConvProblem problem;
  int n = 0, m = 0, h = 0, w = 0;  // output[n][m][h][w]
  double expected = 0.0;           // the double-precision reference
  float got = 0.0f;
  double allowed = 0.0;  // the largest difference that passes
  std::string text() const;
};

// What became of one shape of the check, in its order.
struct ConvShapeOutcome {
  enum class Kind { Passed, Failed, Declined, NotRun };
  ConvProblem problem;
  Kind kind = Kind::NotRun;
  std::string reason;        // Declined: the kernel's reason
  const char* name() const;  // "passed", "failed", "declined", "not run"
};

struct ConvCheckResult {
  uint64_t seed = 0;
  std::vector<ConvProblem> checked;        // shapes the kernel computed correctly
  std::vector<std::string> declined;       // shapes it declined, with its reason
  std::optional<ConvMismatch> firstWrong;  // set: the check failed on checked.size()-th shape
  // With firstWrong: the whole output map (image, output channel) that holds it, classified.
  std::optional<ConvFailureMap> failure;
  std::vector<ConvShapeOutcome> outcomes;  // every shape asked for, in order
  bool passed() const { return !firstWrong && !checked.empty(); }
  std::string summary() const;
};

// `count` shapes from `seed`: odd sizes that are multiples of no tile, batches of 1 to 3, 1 to 5
// channels in, 1 to 6 out, kernels 1x1 to 5x5 (some not square), padding 0 to 2 and strides 1 and
// 2. The first is always the course's shape, cut small (a 5x5 kernel over a 1-channel image).
std::vector<ConvProblem> randomCheckShapes(uint64_t seed, int count);

// The shapes a student's kernel is checked on: the `count` random ones of randomCheckShapes, and
// right after the first, each of the model's own conv layers (`modelLayers`, from the network the
// kernel then runs: the course models' 7x7 layers, which no random shape reaches) at batch 2, on
// a smaller image where the layer's reference would cost more than a few tens of millions of
// multiply-adds. A kernel whose tile only holds smaller windows is found wrong (or declines the
// layer) in the check, not later in the network.
std::vector<ConvProblem> checkShapes(uint64_t seed, int count, const std::vector<ConvProblem>& modelLayers);

// An element passes when |got - expected| <= relative x (sum of |input x weight| over its
// window), which bounds FP32 rounding; relative 3e-5 holds for the hundreds of products a window
// of these shapes sums.
inline constexpr double kUserKernelRelativeTolerance = 3e-5;

// Runs `conv` on every shape (inputs and weights uniform in [-1, 1] with a few outliers of +-8)
// and stops at the first shape with a wrong element, keeping that shape's failing map (the image
// and output channel of its first wrong element, classified element by element). `unsupported(problem)` non-empty: the
// shape is declined and skipped. `keepGoing` false: stop early (cancel).
ConvCheckResult checkConvAgainstReference(ConvBackend& conv, const std::vector<ConvProblem>& shapes, uint64_t seed,
                                          const std::function<std::string(const ConvProblem&)>& unsupported = {},
                                          const std::function<bool()>& keepGoing = {});

// The check in two halves, for a kernel that runs in a process of its own: the expected values
// never sit in the memory of the process that runs the student's code (docs/your-kernel.md,
// "Where the check runs").
//
// The kernel's half: every shape's inputs from `seed` (inputs are no secret), the output poisoned,
// the kernel run, and its raw output handed to `ranShape(index, output)`; no reference is computed.
// Returns, per shape, the reason it was declined (empty: it ran, or was not reached on cancel).
std::vector<std::string> runConvOnCheckShapes(
    ConvBackend& conv, const std::vector<ConvProblem>& shapes, uint64_t seed,
    const std::function<std::string(const ConvProblem&)>& unsupported,
    const std::function<void(size_t index, const std::vector<float>& output)>& ranShape,
    const std::function<bool()>& keepGoing = {});

// The checker's half: regenerates the same inputs, computes the double-precision reference and
// compares, stopping at the first shape with a wrong element, exactly as checkConvAgainstReference.
// `declined[i]` non-empty: shape i was declined for that reason. `outputOf(i)` gives the kernel's
// output of shape i (it may throw convscope::Error: a missing or wrong-sized file).
ConvCheckResult compareCheckOutputs(const std::vector<ConvProblem>& shapes, uint64_t seed,
                                    const std::vector<std::string>& declined,
                                    const std::function<std::vector<float>(size_t index)>& outputOf);

// A shape's output as the file the kernel's process writes: its outputElements() floats, raw, in
// this machine's byte order (both processes run here). Its size is known before it is written or
// read: checkOutputFileBytes.
int64_t checkOutputFileBytes(const ConvProblem& problem);
std::filesystem::path checkOutputFile(const std::filesystem::path& folder, size_t index);  // shape-<index>.f32
void writeCheckOutput(const std::filesystem::path& file, const ConvProblem& problem, const std::vector<float>& output);
// Throws convscope::Error naming the file when it is missing or its size is not the shape's (a
// truncated file, a file of another shape), before reading a byte of it.
std::vector<float> readCheckOutput(const std::filesystem::path& file, const ConvProblem& problem);

}  // namespace convscope
