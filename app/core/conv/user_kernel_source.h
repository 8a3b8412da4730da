// A student's kernel file as ConvScope reads it before compiling (the contract:
// docs/your-kernel.md): its id, its text and the launch geometry its CONVSCOPE_* macros state.
// Plain C++: the CLI and the GUI read a file's geometry and refuse a broken one on any machine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/conv/variant_table.h"

namespace convscope {

// The name every student's kernel has, and its parameters (extern "C", so NVRTC keeps the name).
inline constexpr const char* kUserKernelName = "convscope_conv";
inline constexpr const char* kUserKernelSignature =
    "extern \"C\" __global__ void convscope_conv(const float* input, const float* weights, float* output, "
    "ConvShape shape)";

// One problem in a kernel file, "file:line: message" (line 0: the file as a whole).
struct KernelDiagnostic {
  std::string file;
  int line = 0;
  std::string message;
  std::string text() const;
};

// What the file's macros say. A block of blockX x blockY threads computes a tileWidth x
// tileHeight patch of one output map; the grid is (ceil(outWidth / tileWidth),
// ceil(outHeight / tileHeight), batch * outChannels).
struct UserKernelLaunch {
  int blockX = 0, blockY = 0;
  int tileWidth = 0, tileHeight = 0;
  int maxKernel = 0;  // CONVSCOPE_MAX_KERNEL: larger kernels are declined (0: any size)
  int maxStride = 0;  // CONVSCOPE_MAX_STRIDE: larger strides are declined (0: any stride)

  // Empty when the kernel computes `problem`, else why not (the plan then gives the layer to a
  // course variant and says so).
  std::string unsupportedReason(const ConvProblem& problem) const;
  KernelLaunchGeometry geometry(const ConvProblem& problem) const;
};

struct UserKernelSource {
  std::filesystem::path path;
  std::string id;           // "user-" + the file's stem: what --variant and the charts use
  std::string displayName;  // the file's name
  std::string text;
  UserKernelLaunch launch;
  std::vector<KernelDiagnostic> problems;  // the contract's macros missing or malformed, refused #includes
  // The #includes refused (kernel_includes.h), also in `problems`: a file with any is never handed
  // to the compiler, which would open what they name.
  std::vector<KernelDiagnostic> refusedIncludes;

  bool ok() const { return problems.empty(); }
};

// A kernel file larger than this is refused before it is read (the templates are 3-5 KB).
inline constexpr std::uintmax_t kMaxKernelFileBytes = 1024 * 1024;

// Reads `path` and its CONVSCOPE_* macros. Throws convscope::Error when the file cannot be read
// or is larger than kMaxKernelFileBytes; a file that breaks the contract comes back with its
// problems listed.
UserKernelSource readUserKernelSource(const std::filesystem::path& path);
// The same for a text in memory (tests, an unsaved editor buffer).
UserKernelSource parseUserKernelSource(const std::filesystem::path& path, const std::string& text);

// A table row for the kernel (GPU; requirements, geometry and shape limits from `source`), with
// no way to run yet: gpu/ sets runOnDevice.
ConvVariant userKernelVariantRow(const UserKernelSource& source);

}  // namespace convscope
