// libFuzzer target: arbitrary bytes as a kernel profile JSON file (`convscope-cli profile --json`
// on a GPU machine, opened in the window's Profile tab anywhere). readKernelProfileJson must
// return a profile that keeps its own checks, or throw convscope::Error naming the file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/engine/kernel_profile_json.h"
#include "app/core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = [] {
    const int created = memfd_create("fuzz-profile", 0);
    if (created < 0) std::abort();
    return created;
  }();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const convscope::KernelProfile profile = convscope::readKernelProfileJson(path);
    // What the reader promises (the table divides by calls, draws shares as bars).
    if (profile.batch < 1 || profile.rows.empty()) std::abort();
    for (const convscope::KernelRow& row : profile.rows)
      if (row.calls < 1 || row.minMs > row.maxMs || row.share < 0.0 || row.share > 1.0) std::abort();
  } catch (const convscope::Error& e) {
    if (std::string(e.what()).rfind(path, 0) != 0) std::abort();  // every refusal names the file
  }
  return 0;
}
