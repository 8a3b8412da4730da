// libFuzzer target: arbitrary bytes as an IDX file, plain or gzipped, read through the same
// path as a file on disk (an in-memory file, so the file checks and the streaming gunzip run).
// The reader must return or throw convscope::Error; anything else is a finding, and so is
// allocating more than -rss_limit_mb for any input (the header's declared size is checked
// before anything it promises is allocated or inflated).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/data/idx_file.h"
#include "app/core/util/error.h"

namespace {

int memoryFile() {
  static const int fd = [] {
    const int created = memfd_create("fuzz-idx", 0);
    if (created < 0) std::abort();
    return created;
  }();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memoryFile();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const convscope::IdxArray array = convscope::readIdxFile(path);
    // What the reader returns must be what the header declares.
    uint64_t count = 1;
    for (int64_t d : array.dims) count *= static_cast<uint64_t>(d);
    if (count != array.values.size()) std::abort();
  } catch (const convscope::Error&) {
  }
  try {
    convscope::parseIdx(std::vector<uint8_t>(data, data + size), "fuzz.idx");
  } catch (const convscope::Error&) {
  }
  return 0;
}
