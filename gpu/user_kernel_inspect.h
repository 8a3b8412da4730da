// Why a student's kernel is slow (convscope-cli kernel info, ptx, sass; docs/your-kernel.md): the
// kernel compiled for one architecture with ptxas's resource report and its PTX kept, its
// registers, shared, local and constant memory, and the occupancy of the file's launch geometry.
// On the GPU here the figures and the occupancy come from the driver; for another architecture,
// or on a machine without a GPU, from the compiler, with the occupancy computed from that
// architecture's limits (app/core/conv/kernel_resources.h) and said to be computed.
#pragma once

#include <optional>
#include <string>

#include "app/core/conv/kernel_resources.h"
#include "gpu/user_kernel.h"

namespace convscope::gpu {

struct UserKernelInspection {
  CompiledUserKernel kernel;  // a cubin for `kernel.architecture`, its PTX in kernel.ptx
  KernelResources resources;
  std::optional<BlockOccupancy> occupancy;  // nothing: the architecture is not in the table
  std::string figuresFrom;                  // "the driver on NVIDIA H100 ..." or "the compiler (ptxas)"
  std::string occupancyFrom;                // "the driver ..." or "computed from sm_90's limits ..."
};

// The architecture `kernel info` uses when none is named: the GPU here, else sm_90.
std::string defaultInspectionArchitecture();

// Compiles `source` for `architecture` ("sm_90"; empty: defaultInspectionArchitecture()) and
// reads its figures. Compile errors come back in kernel.errors, as compileUserKernel's do.
UserKernelInspection inspectUserKernel(const UserKernelSource& source, const std::string& architecture);

}  // namespace convscope::gpu
