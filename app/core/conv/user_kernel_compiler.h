// A student's kernel file compiled at run time, and its row in the variant table, as the core
// knows them. gpu/ installs the compiler (NVRTC) when a program links it, as it installs the GPU
// platform (device/gpu_platform.h), so that the window reaches it through the core only. In a
// program that does not link gpu/, compiling says that it cannot.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/kernel_resources.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"

namespace convscope {

struct CompiledUserKernel {
  UserKernelSource source;
  // Compile errors and contract problems, "file:line: message"; empty when it compiled.
  std::vector<KernelDiagnostic> errors;
  std::string log;           // the compiler's own text, warnings included
  std::string architecture;  // what it was compiled for: "sm_90", or "compute_75" where no GPU is usable
  std::string loweredName;   // the kernel's symbol in the compiled image
  std::vector<char> image;   // CUBIN (sm_) or PTX (compute_)
  std::string ptx;           // the PTX, when the build options asked to keep it (kernel ptx)

  bool ok() const { return errors.empty(); }
  std::string errorText() const;  // the errors, one a line
};

// Why a kernel is slow (kernel info; the window's figures): the kernel compiled for one
// architecture, with its PTX kept, and the resources it uses and the occupancy they allow.
struct UserKernelInspection {
  CompiledUserKernel kernel;  // a cubin for `kernel.architecture`, its PTX in kernel.ptx
  KernelResources resources;
  std::optional<BlockOccupancy> occupancy;  // nothing: the architecture is not in the table
  std::string figuresFrom;                  // "the driver on NVIDIA H100 ..." or "the compiler (ptxas for sm_90)"
  std::string occupancyFrom;                // "the driver ..." or "computed from sm_90's limits ..."
};

struct UserKernelCompiler {
  // Empty when kernels can be compiled here, else why not.
  std::function<std::string()> unavailableReason;
  // Never throws for what the file holds: its problems come back as errors.
  std::function<CompiledUserKernel(const UserKernelSource&)> compile;
  // Adds the kernel's row to the variant table, or updates it in place (the same id). Throws
  // convscope::Error naming the file when it did not compile.
  std::function<const ConvVariant&(const CompiledUserKernel&)> install;
  // Compiles for `architecture` ("sm_90"; empty: the GPU here, else sm_90) and reads the
  // kernel's resources and occupancy: on the GPU here from the driver, else from the compiler.
  // Compile errors come back in kernel.errors.
  std::function<UserKernelInspection(const UserKernelSource&, const std::string& architecture)> inspect;
  // The figures of a kernel compiled elsewhere (a sandboxed compiler process): from the driver
  // when it was compiled for the GPU here, else from ptxas's report in its log. Loads, never runs.
  std::function<UserKernelInspection(const CompiledUserKernel&)> inspectCompiled;
  // What a kernel is compiled for when nothing is named: the GPU here, else sm_90.
  std::function<std::string()> defaultArchitecture;
};

// Installed before main() by gpu/; a second installation replaces the first.
void installUserKernelCompiler(UserKernelCompiler compiler);

// The compiler gpu/ installed, or, where none was, one whose every call says that this program
// cannot compile kernels.
const UserKernelCompiler& userKernelCompiler();

}  // namespace convscope
