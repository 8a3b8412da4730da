// The one gate every file the core reads goes through (models, model cards, image files, IDX
// files, benchmark JSON). It opens the path once, without blocking (a FIFO would otherwise hang
// the open), and checks the opened file itself: it must be a regular file -- not a folder, a
// device such as /dev/zero, a FIFO or a socket -- and no larger than the caller's limit. Every
// refusal is a convscope::Error naming the file and what it is, so "file not found" is said only
// of a file that does not exist.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace convscope {

class InputFile {
 public:
  // `what` names the kind of file in messages, with its article ("an ONNX model", ...); `maxBytes` is the
  // largest size accepted for it. Throws convscope::Error naming the file and the problem.
  InputFile(const std::filesystem::path& path, const std::string& what, uint64_t maxBytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& name() const { return name_; }
  uint64_t size() const { return size_; }

  // Reads up to `count` bytes from the current position; returns how many were read (fewer only
  // at the end of the file). Throws on a read error.
  size_t read(void* buffer, size_t count);
  // The whole file (its size was checked against the limit when it was opened).
  std::string readAll();

 private:
  std::string name_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Whether something exists at `path` (a file, folder, device, even a dangling or looping
// symbolic link): such a name is opened and refused with the reason, never skipped as absent.
bool somethingExistsAt(const std::filesystem::path& path);

// "12.3 MB", "4.0 GB", "1.2 TB": sizes in messages, in decimal units.
std::string formatBytes(uint64_t bytes);

}  // namespace convscope
