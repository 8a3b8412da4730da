// The GPU platform of a CUDA build, installed in the core when the program starts: the first
// device, or the reason there is none (no driver, no device), so that the CLI and GUI can show GPU
// variants as unavailable instead of failing; and the CUDA Device the engine runs on.
#include <cuda_runtime.h>

#ifdef CONVSCOPE_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "app/core/device/gpu_platform.h"
#include "gpu/conv_kernel.h"

namespace convscope::gpu {
namespace {

std::string versionString(int packed) {
  return std::to_string(packed / 1000) + "." + std::to_string((packed % 1000) / 10);
}

GpuInfo query() {
  GpuInfo device;
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
  device.sharedBytesPerBlockOptin = static_cast<int64_t>(props.sharedMemPerBlockOptin);
  device.memoryGiB = static_cast<double>(props.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  device.driverVersion = versionString(driver);
  device.runtimeVersion = versionString(runtime);
  return device;
}

std::string cudnnVersion() {
#ifdef CONVSCOPE_HAVE_CUDNN
  const size_t v = cudnnGetVersion();  // e.g. 91300 for 9.13.0
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
#else
  return {};
#endif
}

std::optional<KernelOccupancy> occupancy(const KernelHandle& kernel, int threadsPerBlock) {
  cudaFuncAttributes attributes{};
  int blocks = 0;
  cudaDeviceProp props{};
  if (cudaFuncGetAttributes(&attributes, kernel.function) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel.function, threadsPerBlock,
                                                    static_cast<size_t>(kernel.dynamicSharedBytes)) != cudaSuccess ||
      cudaGetDeviceProperties(&props, 0) != cudaSuccess) {
    cudaGetLastError();  // leave no sticky error for the engine's next call
    return std::nullopt;
  }
  KernelOccupancy o;
  o.registersPerThread = attributes.numRegs;
  o.blocksPerSm = blocks;
  const int warpsPerBlock = (threadsPerBlock + props.warpSize - 1) / props.warpSize;
  o.occupancy = static_cast<double>(blocks) * warpsPerBlock * props.warpSize / props.maxThreadsPerMultiProcessor;
  return o;
}

const bool installed = [] {
  installGpuPlatform({[] {
                        GpuInfo info = query();
                        info.cudnnVersion = cudnnVersion();  // the library's, GPU or not
                        return info;
                      },
                      makeCudaDevice, occupancy});
  return true;
}();

}  // namespace
}  // namespace convscope::gpu
