// The GPU as the core knows it, without naming CUDA: what device there is (or why none can be
// used) and how to make the engine's Device on it. gpu/ installs the CUDA platform when a program
// links it; without it (a build without CUDA, or a program that does not link gpu/) there is no
// GPU and every query says why.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/core/device/device.h"
#include "app/core/device/kernel_handle.h"

namespace convscope {

struct GpuInfo {
  bool usable = false;
  std::string unusableReason;  // set when !usable: "this build has no CUDA", "no CUDA device found"
  std::string name;            // "NVIDIA H100 80GB HBM3"
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  int64_t sharedBytesPerBlockOptin = 0;  // shared memory a block may have after opting in
  double memoryGiB = 0.0;
  std::string driverVersion;  // "13.0"
  std::string runtimeVersion;
  std::string cudnnVersion;  // "9.13.0", or "" when the build has no cuDNN
};

// What the CUDA runtime reports for one kernel at one block size (cudaFuncGetAttributes,
// cudaOccupancyMaxActiveBlocksPerMultiprocessor): the GPU mapping view's measured figures.
struct KernelOccupancy {
  int registersPerThread = 0;
  int blocksPerSm = 0;
  double occupancy = 0.0;  // active warps over the multiprocessor's maximum
};

struct GpuPlatform {
  std::function<GpuInfo()> query;                       // called once
  std::function<std::unique_ptr<Device>()> makeDevice;  // only when query() said usable
  // Optional: the occupancy of `kernel` launched with `threadsPerBlock`; nullopt when unknown.
  std::function<std::optional<KernelOccupancy>(const KernelHandle& kernel, int threadsPerBlock)> occupancy;
};

// Installed before main() by gpu/; a second installation replaces the first.
void installGpuPlatform(GpuPlatform platform);

// Queried once and cached; safe to call from any thread.
const GpuInfo& gpuInfo();

// The runtime's figures for a kernel, when a GPU is usable and the platform can say; else nullopt
// (the caller estimates from the launch geometry).
std::optional<KernelOccupancy> kernelOccupancy(const KernelHandle& kernel, int threadsPerBlock);

// The engine's Device on the GPU. Throws convscope::Error with the reason when none can be used.
std::unique_ptr<Device> createGpuDevice();

}  // namespace convscope
