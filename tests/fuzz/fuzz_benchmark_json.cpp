// libFuzzer target: arbitrary bytes as a benchmark JSON file (a file from another machine, opened
// in the window's Timing tab or read by a script). readBenchmarkJson must return or throw
// convscope::Error naming the file; any other exception, crash or sanitizer report (a number out
// of an int's range cast, say) is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/engine/benchmark.h"
#include "app/core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An in-memory file, so the reader's own file checks run as for a file on disk.
  static const int fd = [] {
    const int created = memfd_create("fuzz-benchmark", 0);
    if (created < 0) std::abort();
    return created;
  }();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const convscope::BenchmarkReport report = convscope::readBenchmarkJson(path);
    for (const convscope::BenchmarkRun& run : report.runs)
      if (run.batch < 1) std::abort();  // a batch the charts would divide by
  } catch (const convscope::Error& e) {
    if (std::string(e.what()).rfind(path, 0) != 0) std::abort();  // every refusal names the file
  }
  return 0;
}
