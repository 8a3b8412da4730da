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
#include "app/core/conv/user_kernel_compiler.h"
#include "gpu/user_kernel.h"

namespace convscope::gpu {

// The core's (app/core/conv/user_kernel_compiler.h), so that the window reads it too.
using convscope::UserKernelInspection;

// The architecture `kernel info` uses when none is named: the GPU here, else sm_90.
std::string defaultInspectionArchitecture();

// Compiles `source` for `architecture` ("sm_90"; empty: defaultInspectionArchitecture()) and
// reads its figures. Compile errors come back in kernel.errors, as compileUserKernel's do.
UserKernelInspection inspectUserKernel(const UserKernelSource& source, const std::string& architecture);

// The figures of `kernel`, compiled with ptxas's report in its log (a sandboxed compile): from
// the driver when it was compiled for the GPU here, else from that report.
UserKernelInspection inspectCompiledUserKernel(const CompiledUserKernel& kernel);

}  // namespace convscope::gpu
