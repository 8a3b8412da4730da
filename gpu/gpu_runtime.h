// What gpu/ offers the core besides the device query: the CUDA Device behind the engine's GPU
// path, and any GPU variant wrapped as a host-pointer ConvBackend (for the correctness harness).
// Builds without CUDA get stubs that throw convscope::Error with the reason.
#pragma once

#include <memory>
#include <string>

#include "app/core/conv/conv_backend.h"
#include "app/core/engine/device.h"

namespace convscope::gpu {

// Whether this build has a kernel for the GPU variant `variantId` (cuDNN may be missing).
bool hasGpuKernel(const std::string& variantId);

// cuDNN's version ("9.13.0"), or "" when the build has none.
std::string cudnnVersion();

// Throws convscope::Error when no GPU can be used.
std::unique_ptr<Device> createCudaDevice();

// Copies to the GPU, runs the variant's kernel (the host output's content is uploaded first, so
// a poisoned buffer stays poisoned wherever the kernel does not write), copies back.
std::unique_ptr<ConvBackend> makeHostConvBackend(const std::string& variantId);

}  // namespace convscope::gpu
