// A student's kernel file as the grader holds it: read once (a regular file, never through a
// symbolic link), its bytes hashed and copied into a private folder (only this user can enter it),
// and compiled once from that copy by a child process ('convscope-cli kernel compile-isolated')
// that restricts itself before it reads the copy, so that it can open nothing but the CUDA
// toolkit's headers and that folder (the second wall: app/core/util/file_sandbox.h; the first is
// the #include filter). Every later step, the check, the network pass and the timing, loads the
// one module compiled here: the kernel that is timed is the kernel that was checked, and a file
// changed on disk meanwhile changes nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/util/file_sandbox.h"

namespace convscope {

struct SubmittedKernelOptions {
  std::filesystem::path program;  // convscope-cli, which compiles in a child process
  // "sm_90", ...; empty: the GPU here, else sm_90 (one verdict whether or not a GPU is here: a
  // cubin is machine code, so every register and shared-memory limit is checked by ptxas).
  std::string architecture;
  double compileTimeLimitSeconds = 120.0;
  // Test hook only: the compiling child skips the #include filter, so that the second wall can be
  // tested alone. Nothing outside tests sets it.
  bool skipIncludeFilterForTests = false;
};

struct SubmittedKernel {
  SubmittedKernel() = default;
  ~SubmittedKernel();  // removes the private folder
  SubmittedKernel(const SubmittedKernel&) = delete;
  SubmittedKernel& operator=(const SubmittedKernel&) = delete;

  std::string studentFile;          // the file as the student or teacher named it: every message uses it
  std::string contentHash;          // of the bytes read (hex), what "unchanged since last grading" compares
  std::uintmax_t bytes = 0;         // the file's size
  std::filesystem::path folder;     // private (0700): the copy, the compiled module
  UserKernelSource source;          // parsed from the bytes read; path = studentFile
  CompiledUserKernel compiled;      // from the sandboxed compiler; errors name studentFile
  UserKernelInspection inspection;  // registers, shared memory, occupancy of `compiled`
  SandboxReport sandbox;            // whether the compiler's process held the second wall
  std::string compilerFailure;      // the compiling process itself failed (time limit, crash)
  std::string childDetail;          // then: what was missing of its result (for the grader's log)

  bool ok() const { return compiled.ok(); }
  std::filesystem::path copy() const { return folder / "source.cu"; }
  std::filesystem::path moduleFile() const { return folder / "module.bin"; }
  std::filesystem::path compiledFile() const { return folder / "compiled.json"; }
};

// The largest compiled module or compiler log read back from the compiling child.
inline constexpr std::uintmax_t kMaxCompiledModuleBytes = 64u * 1024 * 1024;
inline constexpr std::uintmax_t kMaxCompilerLogBytes = 1024 * 1024;

// Reads `file` once and compiles it as above. Throws convscope::Error naming `studentFile` when
// the file cannot be opened, is a symbolic link or not a regular file, or is larger than
// kMaxKernelFileBytes. What the file holds never throws: its problems come back in
// compiled.errors (the filter's refusals, the compiler's errors).
std::shared_ptr<const SubmittedKernel> submitKernel(const std::filesystem::path& file, const std::string& studentFile,
                                                    const SubmittedKernelOptions& options,
                                                    const std::function<bool()>& keepGoing = {});

// The same for bytes already in memory (an editor's buffer): copied and compiled the same way.
std::shared_ptr<const SubmittedKernel> submitKernelText(const std::string& text, const std::string& studentFile,
                                                        const SubmittedKernelOptions& options,
                                                        const std::function<bool()>& keepGoing = {});

// A fresh folder under the temp folder, made 0700 (only this user can enter it), named `prefix`
// and a random number; and a new file in such a folder, made 0600. Throw convscope::Error naming
// the path when they cannot be made.
std::filesystem::path makePrivateFolder(const std::string& prefix);
void writePrivateFile(const std::filesystem::path& path, const std::string& bytes);

// The child's side ('kernel compile-isolated FOLDER'): restricts this process to the toolkit's
// headers and FOLDER, then reads FOLDER/source.cu, compiles it with `compile` and writes
// compiled.json and module.bin into FOLDER. `toolkitFolders` are the compiler's include folders;
// `warmUp` runs before the restriction (NVRTC loads its builtins lazily, at its first compile).
struct IsolatedCompileRequest {
  std::filesystem::path folder;
  std::string studentFile;
  std::string architecture;
  bool skipIncludeFilter = false;
};
int runIsolatedCompile(const IsolatedCompileRequest& request, const std::vector<std::filesystem::path>& toolkitFolders,
                       const std::function<void()>& warmUp,
                       const std::function<CompiledUserKernel(const UserKernelSource&, const std::string&)>& compile);

// The compiled module in `folder` (written by runIsolatedCompile), for the process that runs it.
// Throws convscope::Error when it is missing, oversized or malformed.
CompiledUserKernel readCompiledKernel(const std::filesystem::path& folder);

}  // namespace convscope
