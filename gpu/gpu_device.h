// What CUDA device, if any, this process can use. Builds without CUDA compile the stub in
// gpu_device_none.cpp, so callers never need an #ifdef.
#pragma once

#include <string>

namespace convscope::gpu {

struct GpuDevice {
  bool usable = false;
  std::string unusableReason;  // set when !usable: "this build has no CUDA", "no CUDA device found"
  std::string name;            // "NVIDIA H100 80GB HBM3"
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  double memoryGiB = 0.0;
  std::string driverVersion;  // "13.0"
  std::string runtimeVersion;
};

// Queried once and cached; safe to call from any thread.
const GpuDevice& gpuDevice();

}  // namespace convscope::gpu
