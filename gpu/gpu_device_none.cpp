// The GPU query of a build without CUDA: there is never a usable device.
#include "gpu_device.h"

namespace convscope::gpu {

const GpuDevice& gpuDevice() {
  static const GpuDevice none{false, "this build of ConvScope has no CUDA support", {}, 0, 0, 0, 0.0, {}, {}};
  return none;
}

}  // namespace convscope::gpu
