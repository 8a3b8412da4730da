#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "app/core/conv/conv_failure_map.h"
#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_resources.h"
#include "gpu/fair_timing_harness.h"

namespace convscope::gpu {
namespace {

__global__ void fillTimingInputs(float* values, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x)
    values[i] = timingInputValue(seed, static_cast<uint64_t>(i));
}

__global__ void fillBits(uint32_t* words, int64_t count, uint32_t bits) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x)
    words[i] = bits;
}

// A problem's sizes as the whole-output check reads them (ConvProblem's methods are host code).
struct CheckedShape {
  int64_t outputs, outChannels, outHeight, outWidth, inChannels, inHeight, inWidth;
  int64_t perGroup, outPerGroup, kernelHeight, kernelWidth;
  int64_t strideHeight, strideWidth, padTop, padLeft, dilationHeight, dilationWidth;
};

CheckedShape checkedShapeOf(const ConvProblem& p) {
  return {p.outputElements(),
          p.outChannels,
          p.outHeight(),
          p.outWidth(),
          p.inChannels,
          p.inHeight,
          p.inWidth,
          p.inChannelsPerGroup(),
          p.outChannelsPerGroup(),
          p.kernelHeight,
          p.kernelWidth,
          p.strideHeight,
          p.strideWidth,
          p.padTop,
          p.padLeft,
          p.dilationHeight,
          p.dilationWidth};
}

// Where the whole-output check leaves its outcome: the smallest wrong index (kNoneWrong when none)
// and how many are wrong. Reset to {kNoneWrong, 0} before and after every check, so that every
// launch of the kernel finds the same bits there.
struct WholeCheckSlots {
  unsigned long long firstWrong;
  unsigned long long wrong;
};
constexpr unsigned long long kNoneWrong = std::numeric_limits<unsigned long long>::max();

// Every output element against the double-precision reference of the inputs now in `input` and
// `weights` (regenerated from the repetition's seed after the launch): the same sum, in the same
// order, as the parent's sampledReference (fair_timing.cpp), and the same tolerance. The products
// of two 24-bit inputs are exact in double, so this sum and the parent's are the same bits.
__global__ void checkWholeOutput(CheckedShape s, const float* input, const float* weights, const float* output,
                                 double relativeTolerance, WholeCheckSlots* slots) {
  // Every lane of a warp goes round the loop the same number of times (the warp's first index is
  // the same for all of them), so that the ballot below is taken by the whole warp each time.
  const unsigned lane = threadIdx.x % 32;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t warpFirst = blockIdx.x * int64_t{blockDim.x} + (threadIdx.x - lane); warpFirst < s.outputs;
       warpFirst += stride) {
    const int64_t i = warpFirst + lane;
    bool wrong = false;
    if (i < s.outputs) {
      const int64_t w = i % s.outWidth, h = i / s.outWidth % s.outHeight;
      const int64_t m = i / (s.outWidth * s.outHeight) % s.outChannels;
      const int64_t n = i / (s.outWidth * s.outHeight * s.outChannels);
      const int64_t firstChannel = m / s.outPerGroup * s.perGroup;
      double sum = 0.0, magnitude = 0.0;
      for (int64_t c = 0; c < s.perGroup; ++c)
        for (int64_t ki = 0; ki < s.kernelHeight; ++ki)
          for (int64_t kj = 0; kj < s.kernelWidth; ++kj) {
            const int64_t y = h * s.strideHeight - s.padTop + ki * s.dilationHeight;
            const int64_t x = w * s.strideWidth - s.padLeft + kj * s.dilationWidth;
            if (y < 0 || y >= s.inHeight || x < 0 || x >= s.inWidth) continue;
            const double product =
                double{input[((n * s.inChannels + firstChannel + c) * s.inHeight + y) * s.inWidth + x]} *
                double{weights[((m * s.perGroup + c) * s.kernelHeight + ki) * s.kernelWidth + kj]};
            sum += product;
            magnitude += fabs(product);
          }
      const double allowed = relativeTolerance * magnitude + 1e-30;
      // Written so that NaN (and the unwritten poison, a NaN) fails: the comparison is false for it.
      wrong = !(fabs(double{output[i]} - sum) <= allowed);
    }
    // One atomic per warp, not per element (a kernel that writes nothing makes every element
    // wrong): the lowest wrong lane holds the warp's smallest wrong index.
    const unsigned wrongLanes = __ballot_sync(0xffffffffu, wrong);
    if (wrongLanes != 0 && lane == static_cast<unsigned>(__ffs(static_cast<int>(wrongLanes)) - 1)) {
      atomicAdd(&slots->wrong, static_cast<unsigned long long>(__popc(wrongLanes)));
      atomicMin(&slots->firstWrong, static_cast<unsigned long long>(i));
    }
  }
}

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "checkWholeOutput takes a ballot of whole warps");
int blocksFor(int64_t count) {
  return static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 65535));
}

// Fresh inputs and weights for `inputSeed`, the output poisoned: ConvScope's kernels, not timed.
void prepareRepetition(const FairTimingPlan& plan, uint64_t inputSeed, float* input, float* weights, float* output) {
  const ConvProblem& p = plan.problem;
  fillTimingInputs<<<blocksFor(p.inputElements()), kThreads>>>(input, p.inputElements(), inputSeed);
  fillTimingInputs<<<blocksFor(p.weightElements()), kThreads>>>(weights, p.weightElements(),
                                                                timingWeightSeed(inputSeed));
  fillBits<<<blocksFor(p.outputElements()), kThreads>>>(reinterpret_cast<uint32_t*>(output), p.outputElements(),
                                                        kUnwrittenPoisonBits);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
  // The device's stream may not wait for the legacy stream these ran on: finished before any launch.
  CONVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
}

void resetWholeCheckSlots(WholeCheckSlots* slots) {
  const WholeCheckSlots none{kNoneWrong, 0};
  CONVSCOPE_CUDA_CHECK(cudaMemcpy(slots, &none, sizeof none, cudaMemcpyHostToDevice));
}

// The whole output of a repetition whose launch has ended and whose device is synchronised: its
// inputs regenerated from `inputSeed` over whatever the kernel left in their buffers, then every
// element compared on the device (checkWholeOutput). Nothing of the reference is ever stored: only
// the two counters come back, and the kernel's value at the first wrong element.
WholeOutputCheck checkWholeOutputNow(const FairTimingPlan& plan, uint64_t inputSeed, double relativeTolerance,
                                     float* input, float* weights, const float* output, WholeCheckSlots* slots) {
  const ConvProblem& p = plan.problem;
  fillTimingInputs<<<blocksFor(p.inputElements()), kThreads>>>(input, p.inputElements(), inputSeed);
  fillTimingInputs<<<blocksFor(p.weightElements()), kThreads>>>(weights, p.weightElements(),
                                                                timingWeightSeed(inputSeed));
  CONVSCOPE_CUDA_CHECK_LAUNCH();
  resetWholeCheckSlots(slots);  // synchronous: after the fills, before the check
  checkWholeOutput<<<blocksFor(p.outputElements()), kThreads>>>(checkedShapeOf(p), input, weights, output,
                                                                relativeTolerance, slots);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
  CONVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
  WholeCheckSlots found{};
  CONVSCOPE_CUDA_CHECK(cudaMemcpy(&found, slots, sizeof found, cudaMemcpyDeviceToHost));
  resetWholeCheckSlots(slots);
  WholeOutputCheck check;
  check.checked = true;
  check.relativeTolerance = relativeTolerance;
  check.wrong = static_cast<int64_t>(found.wrong);
  if (found.firstWrong != kNoneWrong && found.firstWrong < static_cast<unsigned long long>(p.outputElements())) {
    check.firstWrong = static_cast<int64_t>(found.firstWrong);
    CONVSCOPE_CUDA_CHECK(
        cudaMemcpy(&check.firstWrongValue, output + check.firstWrong, sizeof(float), cudaMemcpyDeviceToHost));
  }
  return check;
}

}  // namespace

std::vector<TimedRepetition> timeConvFairly(const ConvVariant& row, Device& device, const FairTimingPlan& plan) {
  if (!row.runOnDevice) throw Error("internal: " + row.id + " does not run on the GPU");
  const ConvProblem& p = plan.problem;
  const DeviceTensor input = device.allocate({p.inputElements()});
  const DeviceTensor weights = device.allocate({p.weightElements()});
  const DeviceTensor output = device.allocate({p.outputElements()});
  // Twice the L2 cache, written between repetitions: no input or output of the last one stays in it.
  int deviceIndex = 0, l2Bytes = 0;
  CONVSCOPE_CUDA_CHECK(cudaGetDevice(&deviceIndex));
  CONVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&l2Bytes, cudaDevAttrL2CacheSize, deviceIndex));
  const int64_t flushWords = std::max<int64_t>(2 * int64_t{l2Bytes} / 4, 1);
  const DeviceTensor flush = device.allocate({flushWords});
  // The whole-output check's two counters, allocated and reset before the first launch: every
  // launch finds them the same (nothing tells a repetition from another).
  const DeviceBuffer slotsBuffer(sizeof(WholeCheckSlots));
  WholeCheckSlots* const slots = slotsBuffer.as<WholeCheckSlots>();
  CONVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());  // the allocations, on the device's stream, done
  resetWholeCheckSlots(slots);
  const double tolerance = plan.relativeTolerance > 0.0 ? plan.relativeTolerance
                                                        : std::max(kUserKernelRelativeTolerance, row.relativeTolerance);
  const auto launch = [&] { row.runOnDevice(device, p, input.data(), weights.data(), output.data(), ConvEpilogue{}); };

  // Warm-up: the module loaded, the caches and clocks settled; not timed, not kept.
  for (int w = 0; w < plan.warmups; ++w) {
    prepareRepetition(plan, repetitionInputSeed(plan.runSeed, plan.layer, p.batch, -1 - w), input.data(),
                      weights.data(), output.data());
    launch();
  }
  CONVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<TimedRepetition> repetitions;
  for (int r = 0; r < plan.repetitions; ++r) {
    TimedRepetition t;
    t.repetition = r;
    t.inputSeed = repetitionInputSeed(plan.runSeed, plan.layer, p.batch, r);
    prepareRepetition(plan, t.inputSeed, input.data(), weights.data(), output.data());
    fillBits<<<blocksFor(flushWords), kThreads>>>(reinterpret_cast<uint32_t*>(flush.data()), flushWords,
                                                  static_cast<uint32_t>(r));
    CONVSCOPE_CUDA_CHECK_LAUNCH();
    CONVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    launch();
    // The whole device: work the kernel left on any stream is inside the time.
    CONVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The positions are drawn only now, on the host, after the kernel ended: it cannot know them.
    // One small copy each (a copy of the whole output would cost more than the kernel at a large batch).
    t.positions = sampledOutputPositions(plan.sampleSeed, t.inputSeed, p.outputElements(), plan.sampleCount);
    for (const int64_t position : t.positions) {
      float value = 0.0f;
      CONVSCOPE_CUDA_CHECK(cudaMemcpy(&value, output.data() + position, sizeof(float), cudaMemcpyDeviceToHost));
      t.values.push_back(value);
    }
    // Then every element, on the device: the samples above were copied first, so this touches
    // nothing they read.
    t.whole = checkWholeOutputNow(plan, t.inputSeed, tolerance, input.data(), weights.data(), output.data(), slots);
    repetitions.push_back(std::move(t));
  }
  return repetitions;
}

}  // namespace convscope::gpu
