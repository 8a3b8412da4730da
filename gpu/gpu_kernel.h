// What a GPU kernel file (gpu/kernels/NN_name.cu) gives its row in gpu/gpu_variants.cpp: plain C++
// function pointers, so that the table compiles in builds without CUDA too (the rows are then
// listed, unavailable). Each kernel file defines one `const GpuKernel k...Kernel`.
#pragma once

#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/device.h"

namespace convscope::gpu {

struct GpuKernel {
  // Empty when the kernel computes `problem`, else why not. nullptr: every shape.
  std::string (*unsupportedReason)(const ConvProblem& problem);
  // The launches it makes for `problem`, as the launcher computes them.
  std::vector<KernelLaunchGeometry> (*launchGeometry)(const ConvProblem& problem);
  // Enqueues the convolution on `device` (the CUDA device; device pointers).
  void (*run)(Device& device, const ConvProblem& problem, const float* input, const float* weights, float* output,
              const ConvEpilogue& epilogue);
  // Whether it fuses `step` after a conv of this shape (ConvVariant::fusesStep). nullptr: every
  // step its row lists.
  bool (*fusesStep)(const ConvProblem& problem, const EpilogueStep& step) = nullptr;
  // The __global__ function of launch `index` (ConvVariant::kernelHandle). nullptr: not given.
  KernelHandle (*kernelHandle)(const ConvProblem& problem, size_t index) = nullptr;
};

// What a whole-network kernel file gives its row besides its GpuKernel: ConvVariant's
// declinesNetwork and runNetwork.
struct GpuNetworkKernel {
  std::string (*declines)(const ChainNetwork& network);
  void (*run)(Device& device, const ChainNetwork& network, const NetworkRun& run);
};

}  // namespace convscope::gpu
