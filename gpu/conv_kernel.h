// The uniform launcher of every GPU convolution variant. Each variant's .cu file (gpu/kernels/)
// defines one ConvKernel; gpu/conv_kernels.cu lists them by the ids of the registry
// (app/core/conv/conv_registry.cpp), which holds their names and descriptions.
#pragma once

#include <string>

#include "app/core/conv/conv_problem.h"
#include "gpu/gpu_context.h"

namespace convscope::gpu {

// Device pointers. The launcher enqueues all of its work on context.stream() -- per-call setup
// such as constant-memory copies and memsets included, so the op time covers it -- checks every
// CUDA call, and never synchronises.
struct ConvLaunch {
  const ConvProblem& problem;
  const float* input;    // N x C x H x W
  const float* weights;  // M x C x KH x KW
  float* output;         // N x M x OH x OW, every element overwritten
  GpuContext& context;
};

struct ConvKernel {
  const char* id;
  // Empty when the variant computes `problem`, else why not (the engine then falls back to
  // gpu-baseline for that layer and says so). nullptr: every shape is supported.
  std::string (*unsupportedReason)(const ConvProblem& problem);
  void (*launch)(const ConvLaunch& launch);
};

// The kernel of a registry id, or nullptr (no such GPU variant, or built without it).
const ConvKernel* findConvKernel(const std::string& id);

}  // namespace convscope::gpu
