// A student's kernel file (docs/your-kernel.md) compiled at run time with NVRTC and added to the
// variant table as a row (addUserConvVariant), so the engine, the check and the benchmark run it
// like any course variant. Plain C++: in a build without CUDA every call says that this build
// cannot compile kernels. These functions are also installed in the core as its
// UserKernelCompiler (app/core/conv/user_kernel_compiler.h), which the window uses.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"

namespace convscope::gpu {

// Declared in the core, which the window reaches this compiler through.
using convscope::CompiledUserKernel;

// Empty when this build can compile kernels at run time, else why not.
std::string userKernelCompilerUnavailableReason();

// Compiles `source` for the GPU here (or, with none usable, for the oldest architecture CUDA 13
// supports, to check it). Contract problems (the CONVSCOPE_* macros, the kernel's name and
// signature) come back as errors that say what the contract asks. Never throws for what the file
// holds.
CompiledUserKernel compileUserKernel(const UserKernelSource& source);

// How to build a kernel other than for running it here as written.
struct UserKernelBuildOptions {
  std::string architecture;  // "sm_90", ...: a cubin for that GPU; empty: the GPU here
  bool ptxasInfo = false;    // the log holds ptxas's resource lines ("Used 40 registers, ...")
  bool keepPtx = false;      // CompiledUserKernel::ptx filled
};
CompiledUserKernel compileUserKernel(const UserKernelSource& source, const UserKernelBuildOptions& options);

// The folders a kernel's #include <...> is looked up in: the toolkit's headers (and cccl). The
// sandboxed compiler may read these and nothing else (app/core/engine/submitted_kernel.h).
const std::vector<std::filesystem::path>& toolkitIncludeFolders();

// Compiles a tiny kernel for `architecture`, so that everything the compiler loads lazily is
// loaded before its process restricts itself.
void warmUpUserKernelCompiler(const std::string& architecture);

// The row of a compiled kernel: added to the table the first time, updated in place after (the
// same id: the row keeps its place and references to it stay valid; its next run loads the new
// code). Throws convscope::Error when `kernel` did not compile.
const ConvVariant& installUserKernel(const CompiledUserKernel& kernel);

// CUDA's words for the error that broke this process's GPU context (a kernel that faulted, trapped
// or failed an assertion), or "" while the context is healthy. It does not wait for work in
// flight. Why: after a fault the first call to fail may be a library's (cuBLAS, cuDNN), whose
// message says nothing of the kernel; the grader asks this to tell a fault from a wrong result.
std::string brokenContextError();

}  // namespace convscope::gpu
