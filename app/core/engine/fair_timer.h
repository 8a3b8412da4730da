// The fair timer of a course variant, as the core reaches it: the grader's reference lines are the
// course's GPU variants timed exactly as a student's kernel is (gpu/fair_timing_harness.h: fresh
// inputs every repetition, the L2 flushed, every repetition's whole output checked). gpu/ installs
// the timer when a program links it; the core names no CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/device.h"
#include "app/core/engine/fair_timing.h"

namespace convscope {

struct FairTimingPlan {
  ConvProblem problem;
  int layer = 0;  // the layer's place in the model: part of every repetition's input seed
  int warmups = 2;
  int repetitions = 10;
  uint64_t runSeed = 0;     // the repetitions' input seeds come from it (repetitionInputSeed)
  uint64_t sampleSeed = 0;  // the parent's: the positions sampled after each repetition
  int sampleCount = 64;
  // The whole output's tolerance (as sampledReference's); 0: the row's own, at least FP32's
  // (kUserKernelRelativeTolerance), as the parent judges a student's kernel or a course variant.
  double relativeTolerance = 0.0;
};

using FairTimer =
    std::function<std::vector<TimedRepetition>(const ConvVariant& row, Device& device, const FairTimingPlan& plan)>;

// Installed before main() by gpu/; a second installation replaces the first.
void installFairTimer(FairTimer timer);

// Times `row` (a GPU row) on `device` with the installed timer. Throws convscope::Error when the
// GPU faults, or when no timer is installed (a program without gpu/) saying so.
std::vector<TimedRepetition> timeConvFairly(const ConvVariant& row, Device& device, const FairTimingPlan& plan);

}  // namespace convscope
