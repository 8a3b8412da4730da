// A student's kernel file (docs/your-kernel.md) compiled at run time with NVRTC and added to the
// variant table as a row (addUserConvVariant), so the engine, the check and the benchmark run it
// like any course variant. Plain C++: in a build without CUDA every call says that this build
// cannot compile kernels.
#pragma once

#include <string>
#include <vector>

#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"

namespace convscope::gpu {

struct CompiledUserKernel {
  UserKernelSource source;
  // Compile errors and contract problems, "file:line: message"; empty when it compiled.
  std::vector<KernelDiagnostic> errors;
  std::string log;           // the compiler's own text, warnings included
  std::string architecture;  // what it was compiled for: "sm_90", or "compute_75" where no GPU is usable
  std::string loweredName;   // the kernel's symbol in the compiled image
  std::vector<char> image;   // CUBIN (sm_) or PTX (compute_)

  bool ok() const { return errors.empty(); }
  std::string errorText() const;  // the errors, one a line
};

// Empty when this build can compile kernels at run time, else why not.
std::string userKernelCompilerUnavailableReason();

// Compiles `source` for the GPU here (or, with none usable, for the oldest architecture CUDA 13
// supports, to check it). Contract problems (the CONVSCOPE_* macros, the kernel's name and
// signature) come back as errors that say what the contract asks. Never throws for what the file
// holds.
CompiledUserKernel compileUserKernel(const UserKernelSource& source);

// The row of a compiled kernel: added to the table the first time, updated in place after (the
// same id: the row keeps its place and references to it stay valid; its next run loads the new
// code). Throws convscope::Error when `kernel` did not compile.
const ConvVariant& installUserKernel(const CompiledUserKernel& kernel);

}  // namespace convscope::gpu
