#include "app/core/device/gpu_platform.h"

#include <mutex>

#include "app/core/util/error.h"

namespace convscope {
namespace {

GpuPlatform& installed() {
  static GpuPlatform platform;
  return platform;
}

}  // namespace

void installGpuPlatform(GpuPlatform platform) {
  installed() = std::move(platform);
}

const GpuInfo& gpuInfo() {
  static const GpuInfo info = [] {
    if (installed().query) return installed().query();
    GpuInfo none;
    none.unusableReason = "this build of ConvScope has no CUDA support";
    return none;
  }();
  return info;
}

std::optional<KernelOccupancy> kernelOccupancy(const KernelHandle& kernel, int threadsPerBlock) {
  if (!kernel.function || !gpuInfo().usable || !installed().occupancy) return std::nullopt;
  return installed().occupancy(kernel, threadsPerBlock);
}

std::unique_ptr<Device> createGpuDevice() {
  if (!gpuInfo().usable) throw Error("no GPU can be used: " + gpuInfo().unusableReason);
  return installed().makeDevice();
}

}  // namespace convscope
