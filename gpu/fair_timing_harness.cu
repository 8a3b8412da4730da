#include <cuda_runtime.h>

#include <chrono>
#include <cstring>

#include "app/core/conv/conv_failure_map.h"
#include "app/core/util/error.h"
#include "gpu/cuda_check.h"
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

constexpr int kThreads = 256;
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
  CONVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());  // the allocations, on the device's stream, done
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
    repetitions.push_back(std::move(t));
  }
  return repetitions;
}

GpuClocks gpuPeakClocks() {
  int deviceIndex = 0, smKHz = 0, memoryKHz = 0;
  if (cudaGetDevice(&deviceIndex) != cudaSuccess) return {};
  if (cudaDeviceGetAttribute(&smKHz, cudaDevAttrClockRate, deviceIndex) != cudaSuccess) smKHz = 0;
  if (cudaDeviceGetAttribute(&memoryKHz, cudaDevAttrMemoryClockRate, deviceIndex) != cudaSuccess) memoryKHz = 0;
  return {smKHz / 1000, memoryKHz / 1000};
}

}  // namespace convscope::gpu
