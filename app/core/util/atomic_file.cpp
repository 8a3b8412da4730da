#include "app/core/util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "app/core/util/error.h"

namespace convscope {

namespace {

// "FILE: cannot be written (the disk is full); any file there before is unchanged"
Error writeError(const std::string& name, int error) {
  const std::string reason = error == ENOSPC ? "the disk is full" : std::strerror(error);
  return Error(name + ": cannot be written (" + reason + "); any file there before is unchanged");
}

}  // namespace

void writeFileAtomically(const std::filesystem::path& path, const std::string& content, unsigned mode) {
  const std::string name = path.string();
  if (name.empty() || !path.has_filename()) throw Error("'" + name + "': no file name to save to");
  // Beside the target, so that the rename stays within one file system. The name is unique per
  // process and call; O_EXCL refuses one that exists. The default mode 0666 lets the umask
  // decide, as for any newly created file.
  static std::atomic<unsigned> counter{0};
  // (Appended piece by piece: GCC 12 warns, wrongly, about "." + std::string.)
  std::string temporaryName = ".";
  temporaryName += path.filename().string();
  temporaryName += ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1));
  const std::filesystem::path temporary = path.parent_path() / temporaryName;
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) throw writeError(name, errno);
  const auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw writeError(name, error);
  };
  for (size_t written = 0; written < content.size();) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    written += static_cast<size_t>(n);
  }
  // On the disk before the rename: otherwise a power cut could leave the new name empty.
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw writeError(name, error);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw writeError(name, error);
  }
}

}  // namespace convscope
