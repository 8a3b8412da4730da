#include "app/core/grading/submissions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <regex>
#include <set>

#include "app/core/conv/user_kernel_source.h"
#include "app/core/util/error.h"
#include "app/core/util/hashing.h"
#include "app/core/util/unique_fd.h"

namespace convscope {

namespace fs = std::filesystem;
using nlohmann::json;

// An id becomes a file name, a line of the Slurm manifest and a command-line argument: only
// letters, digits, '.', '_' and '-', not starting with '.' or '-'.
bool isSafeId(const std::string& id) {
  // Not starting with '-' either: '--only -x' would read the id as an option.
  static const std::regex safe(R"([A-Za-z0-9_][A-Za-z0-9._-]*)");
  return std::regex_match(id, safe);
}

namespace {

// What an entry of DIR is when it is not a regular file, as lstat sees it (never following a link).
std::string kindOfEntry(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::symlink:
      return "a symbolic link";
    case fs::file_type::directory:
      return "a folder";
    case fs::file_type::fifo:
      return "a named pipe (FIFO)";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    default:
      return "not a regular file";
  }
}

// Why an entry that is not a regular file is refused: a symbolic link could hand another
// student's file (alice/k.cu -> ../bob/k.cu) or any file of the machine to the grader under this
// student's name, and a FIFO or a device would make the grader wait or read what is not a file.
std::string refusal(const fs::path& entry, const fs::file_status& status) {
  std::string what = kindOfEntry(status);
  if (fs::is_symlink(status)) {
    std::error_code error;
    const fs::path target = fs::read_symlink(entry, error);
    if (!error) what += " (to " + target.string() + ")";
  }
  return what + ", not a regular file: refused; a submission must be the student's own file or folder";
}

}  // namespace

// Every entry of DIR, sorted: a submission, or skipped with its reason. Types are read with lstat
// semantics (symlink_status): a link is never followed, so it is refused whatever it points to.
SubmissionFolder discoverSubmissions(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": not a folder of submissions");
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  SubmissionFolder found;
  std::set<std::string> ids;
  for (const fs::path& path : entries) {
    const std::string name = path.filename().string();
    const auto skip = [&](const std::string& where, const std::string& reason) {
      found.skipped.push_back({{"path", where}, {"reason", reason}});
    };
    const fs::file_status status = fs::symlink_status(path);
    Submission s;
    if (fs::is_regular_file(status) && path.extension() == ".cu") {
      s = {path.stem().string(), dir, path, name};
    } else if (fs::is_directory(status)) {
      std::vector<fs::path> kernels;
      std::optional<json> refused;  // the first .cu entry that is not a regular file
      std::vector<fs::path> inner;
      for (const auto& entry : fs::directory_iterator(path)) inner.push_back(entry.path());
      std::sort(inner.begin(), inner.end());
      for (const fs::path& file : inner) {
        if (file.extension() != ".cu") continue;  // notes, headers: never read
        const fs::file_status innerStatus = fs::symlink_status(file);
        if (fs::is_regular_file(innerStatus))
          kernels.push_back(file);
        else if (!refused)
          refused = json{{"path", name + "/" + file.filename().string()}, {"reason", refusal(file, innerStatus)}};
      }
      if (refused) {
        found.skipped.push_back(*refused);
        continue;
      }
      if (kernels.size() != 1) {
        skip(name,
             "a submission folder must hold exactly one .cu file; this one holds " + std::to_string(kernels.size()));
        continue;
      }
      s = {name, dir, kernels[0], name + "/" + kernels[0].filename().string()};
    } else if (!fs::is_regular_file(status)) {
      skip(name, refusal(path, status));
      continue;
    } else {
      skip(name, "not a .cu file or a folder holding one");
      continue;
    }
    if (!isSafeId(s.id)) {
      skip(name, "the id '" + s.id +
                     "' may hold only letters, digits, '.', '_' and '-', and may not start with "
                     "'.' or '-'");
      continue;
    }
    if (!ids.insert(s.id).second) {
      skip(name, "the id '" + s.id + "' is already taken by another entry");
      continue;
    }
    found.submissions.push_back(s);
  }
  return found;
}

// A submission's bytes, read once. Every part of its path below DIR is opened without following a
// symbolic link (openat with O_NOFOLLOW), and what was opened is judged by fstat on the open file,
// not by the path: a link, a FIFO or a device swapped in between the discovery and this open is
// refused too. O_NONBLOCK: opening a FIFO does not wait for a writer. Throws convscope::Error
// naming the file as the student knows it.
std::string readSubmission(const Submission& s) {
  const auto fail = [&](const std::string& what) { return Error(s.relative + ": " + what); };
  UniqueFd folder(::open(s.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() < 0)
    throw Error(s.root.string() + ": cannot open the folder of submissions: " + std::strerror(errno));
  const fs::path relative(s.relative);
  const std::vector<fs::path> parts(relative.begin(), relative.end());
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
    UniqueFd next(::openat(folder.get(), parts[i].c_str(), flags));
    if (next.get() < 0) {
      const int error = errno;
      struct stat status {};
      if (::fstatat(folder.get(), parts[i].c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(status.st_mode))
        throw fail("a symbolic link, not a regular file: refused; a submission must be the student's own file");
      throw fail(std::string("cannot open it: ") + std::strerror(error));
    }
    folder = std::move(next);  // the folder above is closed
  }
  struct stat status {};
  if (::fstat(folder.get(), &status) != 0) throw fail(std::string("cannot read it: ") + std::strerror(errno));
  if (!S_ISREG(status.st_mode))
    throw fail("not a regular file (a FIFO, a device or a socket): refused; a submission must be a .cu file");
  if (static_cast<std::uintmax_t>(status.st_size) > kMaxKernelFileBytes)
    throw fail("has " + std::to_string(status.st_size) + " bytes; a kernel file may have at most " +
               std::to_string(kMaxKernelFileBytes) + " (1 MiB)");
  std::string bytes(kMaxKernelFileBytes + 1, '\0');  // at most the limit, also if it grows meanwhile
  size_t used = 0;
  while (used < bytes.size()) {
    const ssize_t got = ::read(folder.get(), bytes.data() + used, bytes.size() - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw fail(std::string("cannot read it: ") + std::strerror(errno));
    if (got == 0) break;
    used += static_cast<size_t>(got);
  }
  if (used > kMaxKernelFileBytes)
    throw fail("has more than " + std::to_string(kMaxKernelFileBytes) +
               " bytes (1 MiB), the most a kernel file may have");
  bytes.resize(used);
  return bytes;
}

std::string contentHash(const std::string& bytes) {
  return hex64(sipHash24(bytes, 0, 0));
}

// The hash of the submission's bytes as they are now; nothing when they cannot be read (a link or
// a FIFO swapped in: the grading then says why).
std::optional<std::string> submissionHash(const Submission& s) {
  try {
    return contentHash(readSubmission(s));
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace convscope
