// The GPU query of a CUDA build: the first device, or the reason there is none (no driver, no
// device), so that the CLI and GUI can show GPU variants as unavailable instead of failing.
#include <cuda_runtime.h>

#include "gpu/gpu_device.h"

namespace convscope::gpu {
namespace {

std::string versionString(int packed) {
  return std::to_string(packed / 1000) + "." + std::to_string((packed % 1000) / 10);
}

GpuDevice query() {
  GpuDevice device;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) {
    device.unusableReason = "no NVIDIA GPU with a CUDA driver on this machine";
    cudaGetLastError();
    return device;
  }
  if (status != cudaSuccess) {
    device.unusableReason = std::string("CUDA is not usable here (") + cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clear the sticky error so later queries start clean
    return device;
  }
  if (count == 0) {
    device.unusableReason = "no CUDA device found";
    return device;
  }
  cudaDeviceProp props{};
  if (cudaGetDeviceProperties(&props, 0) != cudaSuccess) {
    device.unusableReason = "the CUDA device could not be queried";
    return device;
  }
  device.usable = true;
  device.name = props.name;
  device.computeMajor = props.major;
  device.computeMinor = props.minor;
  device.multiprocessors = props.multiProcessorCount;
  device.memoryGiB = static_cast<double>(props.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  device.driverVersion = versionString(driver);
  device.runtimeVersion = versionString(runtime);
  return device;
}

}  // namespace

const GpuDevice& gpuDevice() {
  static const GpuDevice device = query();
  return device;
}

}  // namespace convscope::gpu
