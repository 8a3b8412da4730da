// Why a student's kernel is slow (docs/your-kernel.md, "kernel info, ptx, sass"): the resources
// one thread and one block use (registers, shared, local and constant memory) and what they allow
// on a multiprocessor (occupancy), and the map from the kernel's source lines to its PTX and SASS
// lines (-lineinfo). Plain host code: on a machine without a GPU the figures come from the
// compiler (ptxas's report) and the occupancy is computed from a table of each architecture's
// limits; gpu/user_kernel_inspect.h asks the driver where there is a GPU.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace convscope {

struct KernelResources {
  int registers = 0;          // per thread
  int sharedStaticBytes = 0;  // per block (__shared__ arrays of fixed size)
  int localBytes = 0;         // per thread: the stack frame (local arrays and spills)
  int spillStoreBytes = 0, spillLoadBytes = 0;
  int constantBytes = 0;  // per kernel: __constant__ data (not the parameters)
  bool found = false;     // false: the report held no line for the kernel
};

// Reads ptxas's report (NVRTC's log with --ptxas-options=-v) for `kernelName`:
//   ptxas info    : Function properties for convscope_conv
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem, 8 bytes cmem[3]
KernelResources parsePtxasReport(const std::string& log, const std::string& kernelName);

// One architecture's limits per multiprocessor (the CUDA C++ Programming Guide's table of
// compute capabilities, and the occupancy calculator's allocation rules).
struct GpuArchitectureLimits {
  std::string name;  // "sm_90"
  int maxThreadsPerSm = 0;
  int maxWarpsPerSm = 0;
  int maxBlocksPerSm = 0;
  int registersPerSm = 65536;
  int registerAllocationUnit = 256;  // registers are given to a warp in multiples of this
  int maxRegistersPerThread = 255;
  int sharedPerSm = 0;             // the largest carveout, bytes
  int sharedAllocationUnit = 128;  // bytes
  int sharedReservedPerBlock = 0;  // the system's share of each block's shared memory, bytes
  int maxThreadsPerBlock = 1024;
};

// The table's row for "sm_XY", or nothing for an architecture it does not hold.
std::optional<GpuArchitectureLimits> architectureLimits(const std::string& architecture);
std::vector<std::string> knownArchitectures();  // "sm_75", "sm_80", ...

struct BlockOccupancy {
  int threadsPerBlock = 0, warpsPerBlock = 0;
  // Blocks per multiprocessor each resource allows (INT_MAX-like large: not a limit) and the least.
  int blocksByWarps = 0, blocksByRegisters = 0, blocksByShared = 0, blocksByBlockLimit = 0;
  int blocksPerSm = 0;
  int activeWarps = 0, maxWarps = 0;
  double fraction() const { return maxWarps ? double(activeWarps) / maxWarps : 0.0; }
  std::string limitedBy;  // "warps", "registers", "shared memory", "blocks per SM", or why none fit
  bool computed = true;   // true: from the table; false: from the driver
};

// One resource's blocks per SM as a reader wants it: the number, or "no limit" for a resource the
// kernel does not use (the large sentinel above is never shown).
std::string blocksLimitText(int blocks);

// The occupancy of a block of `threadsPerBlock` threads using `resources`, computed from
// `limits` as the CUDA occupancy calculator does, with the largest shared memory carveout.
BlockOccupancy computeOccupancy(const GpuArchitectureLimits& limits, int threadsPerBlock,
                                const KernelResources& resources);

// -lineinfo: which source line of `sourceFile` each line of a listing came from (index i: line
// i + 1 of the listing; 0: none, or another file such as convscope_kernel.h).
// PTX: ".file N "path"" and ".loc N LINE COL"; SASS (nvdisasm -g): "//## File "path", line N".
enum class ListingKind { Ptx, Sass };
std::vector<int> sourceLinesOfListing(const std::string& listing, ListingKind kind, const std::string& sourceFile);
// The listing's lines (1-based) that came from `sourceLine`: what the editor highlights.
std::vector<int> listingLinesOfSourceLine(const std::vector<int>& sourceLines, int sourceLine);

// nvdisasm, for SASS: $CONVSCOPE_NVDISASM when set (then only it), the project's own copy (scripts/install-nvdisasm.sh
// puts it in .deps/nvdisasm), then PATH, then the CUDA toolkit. Nothing when none is found.
std::optional<std::filesystem::path> findNvdisasm();
// What to say where none is found: where ConvScope looked and how to get it, in absolute paths,
// ending with the command that shows `kernelFile`'s PTX instead.
std::string nvdisasmMissingMessage(const std::string& kernelFile = {});
// The SASS of a cubin with source lines (nvdisasm -c -g). Throws convscope::Error when nvdisasm
// is missing (nvdisasmMissingMessage) or fails.
std::string disassembleCubin(const std::vector<char>& cubin, const std::string& forFile);

}  // namespace convscope
