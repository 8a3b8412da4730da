// The second wall around a student's kernel: a process restricts itself, with the Linux kernel's
// Landlock (no privileges needed), so that from then on it can open files only beneath the folders
// it names. The compiler process does this before it reads the student's file, so a directive that
// the #include filter (app/core/conv/kernel_includes.h) missed still cannot open anything else of
// the machine. Landlock is also told to refuse TCP connections and binds (ABI 4) and signals or
// abstract sockets to processes outside the sandbox (ABI 6) where the kernel knows them.
// Linux only; elsewhere, and on kernels without Landlock, restrictFileAccess says why it could not.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace convscope {

struct SandboxReport {
  bool enforced = false;  // the restriction holds for this process and its future children
  int abi = 0;            // the Landlock ABI the kernel offers (0: none)
  std::string reason;     // !enforced: why not, in words
  // "enforced (Landlock ABI 7)" or "not enforced: <reason>".
  std::string describe() const;
};

// The Landlock ABI version the running kernel offers, 0 when it has none (or it is disabled).
int landlockAbi();

// From now on this process (and every process it starts) may read files and list folders only
// beneath `readOnly`, and read, create, write and remove files only beneath `readWrite`; nothing
// else of the file system can be opened, executed or changed. Folders that do not exist are
// skipped. Never throws: a kernel without Landlock gives enforced = false and the reason.
SandboxReport restrictFileAccess(const std::vector<std::filesystem::path>& readOnly,
                                 const std::vector<std::filesystem::path>& readWrite);

}  // namespace convscope
