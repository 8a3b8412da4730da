// The timer of a student's kernel (docs/your-kernel.md, "How a kernel is timed"): ConvScope's code
// in the child process that runs the kernel, built so that the kernel cannot fool it. Before each
// timed repetition it generates fresh inputs on the device from the repetition's own seed
// (timing_inputs.h), poisons the output and flushes the L2 cache (writes a buffer of twice its
// size); the whole device is synchronised before and after the launch and the host clock between
// the two synchronisations is the time, so work left on another stream is counted. Warm-up runs are
// not timed. After each repetition, once the launch has ended and the device is synchronised:
// the values at the positions a host-side generator picks (seeded by the parent; drawn after the
// kernel ended, never visible to device code) are copied back one by one for the parent to check;
// then the inputs are regenerated from the repetition's seed and every element of the output is
// compared on the device with a double-precision reference computed there and then (the same sum
// and tolerance as the parent's sampledReference), only the outcome kept (WholeOutputCheck). What
// the device holds when the kernel is launched is the same at every repetition: no reference, no
// sign of which repetition it is or of the checks.
#pragma once

#include <cstdint>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/device.h"
#include "app/core/engine/fair_timer.h"
#include "app/core/engine/fair_timing.h"

namespace convscope::gpu {

// The plan's fields: app/core/engine/fair_timer.h (the core's grader times the course's
// variants through the timer this file installs).
using FairTimingPlan = convscope::FairTimingPlan;

// Times `row` (a GPU row: runOnDevice) on `device` as above. Throws convscope::Error when the GPU
// faults (the kernel's fault) or this build has no CUDA. Installed as the core's fair timer
// (installFairTimer) when a program links gpu/.
std::vector<TimedRepetition> timeConvFairly(const ConvVariant& row, Device& device, const FairTimingPlan& plan);

}  // namespace convscope::gpu
