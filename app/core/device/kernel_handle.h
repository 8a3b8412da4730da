// A kernel as the CUDA runtime knows it, for its occupancy API: the __global__ function (opaque
// here: the core names no CUDA) and the dynamic shared memory it is launched with. The variant
// table's rows hand one out per launch; the GPU platform answers for it.
#pragma once

#include <cstdint>

namespace convscope {

struct KernelHandle {
  const void* function = nullptr;
  int64_t dynamicSharedBytes = 0;
};

}  // namespace convscope
