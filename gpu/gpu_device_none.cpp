// The GPU query of a build without CUDA: there is never a usable device.
#include "gpu/gpu_device.h"

namespace convscope::gpu {

const GpuDevice& gpuDevice() {
  static const GpuDevice none{false, "this build of ConvScope has no CUDA support", {}, 0, 0, 0, 0.0, {}, {}};
  return none;
}

}  // namespace convscope::gpu

#include "app/core/util/error.h"
#include "gpu/gpu_runtime.h"

namespace convscope::gpu {

bool hasGpuKernel(const std::string&) {
  return false;
}

std::string cudnnVersion() {
  return {};
}

std::unique_ptr<Device> createCudaDevice() {
  throw Error(gpuDevice().unusableReason);
}

std::unique_ptr<ConvBackend> makeHostConvBackend(const std::string&) {
  throw Error(gpuDevice().unusableReason);
}

}  // namespace convscope::gpu
