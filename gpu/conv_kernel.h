// The uniform launcher of every GPU convolution variant: each kernel file in gpu/kernels/ has a
// `void launch...(const ConvLaunch&)` and exports it, with its shape check and launch geometry,
// as a GpuKernel (gpu_kernel.h) that its row in gpu/gpu_variants.cpp points at.
#pragma once

#include <memory>
#include <string>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/conv_problem.h"
#include "app/core/device/device.h"
#include "gpu/gpu_context.h"
#include "gpu/gpu_kernel.h"

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

// The CUDA Device (cuda_device.cu) and its stream state; contextOf throws for any other device.
std::unique_ptr<Device> makeCudaDevice();
GpuContext& contextOf(Device& device);

// GpuKernel::run for a launcher that applies no epilogue (none of the course's kernels fuses:
// their rows list no fusable ops, so the plan never hands them one).
template <void (*Launch)(const ConvLaunch&)>
void runWithoutEpilogue(Device& device, const ConvProblem& problem, const float* input, const float* weights,
                        float* output, const ConvEpilogue& epilogue) {
  if (!epilogue.empty()) throw Error("internal: an epilogue was planned for a kernel that fuses nothing");
  Launch(ConvLaunch{problem, input, weights, output, contextOf(device)});
}

}  // namespace convscope::gpu
