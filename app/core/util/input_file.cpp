#include "app/core/util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "app/core/util/error.h"

namespace convscope {
namespace {

std::string openFailure(int error) {
  switch (error) {
    case ENOENT:
      return "file not found";
    case ENOTDIR:
      return "file not found (a part of the path is not a folder)";
    case ELOOP:
      return "is a symbolic link loop (too many levels of symbolic links)";
    case EACCES:
      return "permission denied";
    case ENAMETOOLONG:
      return "the file name is too long";
    default:
      return std::string("cannot be opened (") + std::strerror(error) + ")";
  }
}

// What a non-regular file is, for "x.png: is a directory, not a regular file".
std::string kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISFIFO(mode)) return "is a named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is of an unknown kind";
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& path, const std::string& what, uint64_t maxBytes)
    : name_(path.string()) {
  if (name_.empty()) throw Error("no " + what + " named (empty file name)");
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. It has no
  // effect on regular files, the only kind read below.
  fd_ = ::open(name_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw Error(name_ + ": " + openFailure(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    throw Error(name_ + ": cannot be examined (" + std::strerror(error) + ")");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw Error(name_ + ": " + kindOf(info.st_mode) + ", not a regular file (" + what + " must be a file)");
  }
  size_ = static_cast<uint64_t>(info.st_size);
  if (size_ > maxBytes) {
    ::close(fd_);
    throw Error(name_ + ": is " + formatBytes(size_) + ", over the " + formatBytes(maxBytes) + " limit for " + what);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t InputFile::read(void* buffer, size_t count) {
  size_t done = 0;
  while (done < count) {
    const ssize_t n = ::read(fd_, static_cast<char*>(buffer) + done, count - done);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(name_ + ": read error (" + std::strerror(errno) + ")");
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

std::string InputFile::readAll() {
  std::string bytes(static_cast<size_t>(size_), '\0');
  const size_t got = read(bytes.data(), bytes.size());
  // A file that shrank while being read is truncated here; one that grew is read only as far
  // as its checked size, so the limit holds either way.
  bytes.resize(got);
  return bytes;
}

bool somethingExistsAt(const std::filesystem::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0;
}

std::string formatBytes(uint64_t bytes) {
  char text[32];
  const double value = static_cast<double>(bytes);
  if (bytes >= 1000000000000ULL)
    std::snprintf(text, sizeof text, "%.1f TB", value / 1e12);
  else if (bytes >= 1000000000ULL)
    std::snprintf(text, sizeof text, "%.1f GB", value / 1e9);
  else if (bytes >= 1000000ULL)
    std::snprintf(text, sizeof text, "%.1f MB", value / 1e6);
  else if (bytes >= 1000ULL)
    std::snprintf(text, sizeof text, "%.1f kB", value / 1e3);
  else
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  return text;
}

}  // namespace convscope
