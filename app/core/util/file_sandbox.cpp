#include "app/core/util/file_sandbox.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#ifdef __linux__
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace convscope {

std::string SandboxReport::describe() const {
  if (!enforced) return "not enforced: " + reason;
  return "enforced (Landlock ABI " + std::to_string(abi) + ")";
}

#if defined(__linux__) && defined(SYS_landlock_create_ruleset)

namespace {

// The kernel's ABI, spelled out here rather than taken from <linux/landlock.h>: Debian 12's
// headers stop at ABI 2, and the structures grow by appending fields, so a larger one passed with
// its size works on every kernel that knows its fields (fields a kernel does not know are left 0).
struct RulesetAttributes {
  uint64_t handledAccessFs;
  uint64_t handledAccessNet;  // ABI 4
  uint64_t scoped;            // ABI 6
};
struct PathBeneathAttributes {
  uint64_t allowedAccess;
  int32_t parentFd;
} __attribute__((packed));

constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kExecute = 1ull << 0;
constexpr uint64_t kWriteFile = 1ull << 1;
constexpr uint64_t kReadFile = 1ull << 2;
constexpr uint64_t kReadDir = 1ull << 3;
constexpr uint64_t kRemoveDir = 1ull << 4;
constexpr uint64_t kRemoveFile = 1ull << 5;
constexpr uint64_t kMakeChar = 1ull << 6;
constexpr uint64_t kMakeDir = 1ull << 7;
constexpr uint64_t kMakeReg = 1ull << 8;
constexpr uint64_t kMakeSock = 1ull << 9;
constexpr uint64_t kMakeFifo = 1ull << 10;
constexpr uint64_t kMakeBlock = 1ull << 11;
constexpr uint64_t kMakeSym = 1ull << 12;
constexpr uint64_t kRefer = 1ull << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ull << 14;  // ABI 3
constexpr uint64_t kIoctlDev = 1ull << 15;  // ABI 5

constexpr uint64_t kBindTcp = 1ull << 0;     // ABI 4
constexpr uint64_t kConnectTcp = 1ull << 1;  // ABI 4

constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ull << 1;              // ABI 6

// Every file-system right the kernel's ABI knows: a right not "handled" would stay allowed.
uint64_t fileRightsOf(int abi) {
  uint64_t rights = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir |
                    kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Allows `rights` beneath `folder`; false (with errno) when the kernel refused the rule.
bool allowBeneath(int ruleset, const std::filesystem::path& folder, uint64_t rights) {
  const FileDescriptor dir(::open(folder.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY));
  if (dir.get() < 0) return errno == ENOENT;  // a folder that is not there grants nothing
  PathBeneathAttributes rule{rights, dir.get()};
  return ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0) == 0;
}

std::string systemError(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace

int landlockAbi() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

SandboxReport restrictFileAccess(const std::vector<std::filesystem::path>& readOnly,
                                 const std::vector<std::filesystem::path>& readWrite) {
  SandboxReport report;
  report.abi = landlockAbi();
  if (report.abi == 0) {
    report.reason = errno == EOPNOTSUPP ? "this Linux kernel has Landlock switched off (boot option lsm=...)"
                                        : "this Linux kernel has no Landlock (5.13 or later, built with it, is needed)";
    return report;
  }
  RulesetAttributes attributes{fileRightsOf(report.abi), report.abi >= 4 ? kBindTcp | kConnectTcp : 0,
                               report.abi >= 6 ? kScopeAbstractUnixSocket | kScopeSignal : 0};
  // Older kernels reject a structure larger than they know unless its extra fields are zero; pass
  // only the fields this ABI has.
  const size_t size = report.abi >= 6   ? sizeof(RulesetAttributes)
                      : report.abi >= 4 ? offsetof(RulesetAttributes, scoped)
                                        : offsetof(RulesetAttributes, handledAccessNet);
  const FileDescriptor ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, size, 0)));
  if (ruleset.get() < 0) {
    report.reason = systemError("Landlock refused the rule set");
    return report;
  }
  const uint64_t all = attributes.handledAccessFs;
  const uint64_t reading = kReadFile | kReadDir;
  const uint64_t writing = all & ~(kExecute | kMakeChar | kMakeBlock | kMakeSock | kMakeFifo | kMakeSym);
  for (const std::filesystem::path& folder : readOnly)
    if (!allowBeneath(ruleset.get(), folder, reading)) {
      report.reason = systemError("Landlock refused read access to " + folder.string());
      return report;
    }
  for (const std::filesystem::path& folder : readWrite)
    if (!allowBeneath(ruleset.get(), folder, writing)) {
      report.reason = systemError("Landlock refused write access to " + folder.string());
      return report;
    }
  // Required to restrict oneself without privileges: nothing started from here can gain any.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    report.reason = systemError("prctl(PR_SET_NO_NEW_PRIVS)");
    return report;
  }
  if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
    report.reason = systemError("landlock_restrict_self");
    return report;
  }
  report.enforced = true;
  return report;
}

#else

int landlockAbi() {
  return 0;
}

SandboxReport restrictFileAccess(const std::vector<std::filesystem::path>&, const std::vector<std::filesystem::path>&) {
  SandboxReport report;
  report.reason = "Landlock is a Linux kernel feature, and this is not Linux";
  return report;
}

#endif

}  // namespace convscope
