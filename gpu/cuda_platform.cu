// The GPU platform of a CUDA build, installed in the core when the program starts: the first
// device, or the reason there is none (no driver, no device), so that the CLI and GUI can show GPU
// variants as unavailable instead of failing; the figures its peaks are computed from (clocks, bus
// width, SM count: gpu_platform.h); a device-to-device copy timed on it; and the CUDA Device the
// engine runs on.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#ifdef CONVSCOPE_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "app/core/device/gpu_platform.h"
#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_resources.h"

namespace convscope::gpu {
namespace {

std::string versionString(int packed) {
  return std::to_string(packed / 1000) + "." + std::to_string((packed % 1000) / 10);
}

// "GPU-8f3c1a2b-...", as nvidia-smi -L prints it.
std::string uuidString(const cudaUUID_t& uuid) {
  std::string text = "GPU";
  const int groups[] = {4, 2, 2, 2, 6};
  int at = 0;
  for (const int group : groups) {
    text += '-';
    for (int i = 0; i < group; ++i, ++at) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[at]));
      text += hex;
    }
  }
  return text;
}

// An attribute of device 0, 0 when the driver does not say (and no sticky error left behind).
int attribute(cudaDeviceAttr which) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, which, 0) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return value;
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
  device.uuid = uuidString(props.uuid);
  // Peak clocks in kHz; the bus width in bits (gpu_platform.h computes the peaks from them).
  device.smClockMHz = attribute(cudaDevAttrClockRate) / 1000;
  device.memoryClockMHz = attribute(cudaDevAttrMemoryClockRate) / 1000;
  device.memoryBusWidthBits = attribute(cudaDevAttrGlobalMemoryBusWidth);
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

// Copies between two buffers far larger than the L2 cache on device 0, timed with events on a
// stream of their own; the fastest of ten (the figure is a ceiling: the best the memory did).
// Bytes read plus bytes written over its time.
double measureCopyBytesPerSecond() {
  int previous = 0;
  CONVSCOPE_CUDA_CHECK(cudaGetDevice(&previous));
  CONVSCOPE_CUDA_CHECK(cudaSetDevice(0));
  struct Restore {
    int device;
    ~Restore() { cudaSetDevice(device); }
  } restore{previous};
  size_t freeBytes = 0, totalBytes = 0;
  CONVSCOPE_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const int l2Bytes = attribute(cudaDevAttrL2CacheSize);
  // 8 times the L2 cache, at least 256 MiB, at most an eighth of the free memory each.
  const size_t wanted = std::max<size_t>(size_t{256} << 20, size_t{8} * static_cast<size_t>(std::max(l2Bytes, 0)));
  const size_t bytes = std::min(wanted, freeBytes / 8) / 4096 * 4096;
  if (bytes < (size_t{32} << 20)) return 0.0;  // too little free memory for a figure worth keeping
  const DeviceBuffer from(bytes), to(bytes);
  const CudaStream stream = CudaStream::create(cudaStreamNonBlocking);
  const CudaEvent start = CudaEvent::create(), stop = CudaEvent::create();
  CONVSCOPE_CUDA_CHECK(cudaMemsetAsync(from.get(), 0x5a, bytes, stream));
  CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, stream));  // warm-up
  float fastestMs = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 10; ++i) {
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(start, stream));
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(stop, stream));
    CONVSCOPE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CONVSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    fastestMs = std::min(fastestMs, ms);
  }
  CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return fastestMs > 0.0f ? 2.0 * static_cast<double>(bytes) / (1e-3 * fastestMs) : 0.0;
}

const bool installed = [] {
  installGpuPlatform({[] {
                        GpuInfo info = query();
                        info.cudnnVersion = cudnnVersion();  // the library's, GPU or not
                        return info;
                      },
                      makeCudaDevice, occupancy, measureCopyBytesPerSecond});
  return true;
}();

}  // namespace
}  // namespace convscope::gpu
