// A folder of students' submissions as the grader finds and reads it (docs/class-mode.md): each a
// FILE.cu or a folder holding exactly one .cu, never through a symbolic link, a FIFO or a device;
// each read once, so that the bytes hashed are the bytes compiled, checked, run and timed.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace convscope {

struct Submission {
  std::string id;
  std::filesystem::path root;  // DIR
  std::filesystem::path file;  // the .cu: root / relative
  std::string relative;        // its path under DIR, as the student knows it: every message names it so
};

struct SubmissionFolder {
  std::vector<Submission> submissions;
  std::vector<nlohmann::json> skipped;  // {"path", "reason"}
};

// An id becomes a file name, a line of the Slurm manifest and a command-line argument: only
// letters, digits, '.', '_' and '-', not starting with '.' or '-'.
bool isSafeId(const std::string& id);

// Every entry of `dir`, sorted: a submission, or skipped with its reason. Throws convscope::Error
// when `dir` is not a folder.
SubmissionFolder discoverSubmissions(const std::filesystem::path& dir);

// A submission's bytes, read once (at most kMaxKernelFileBytes). Throws convscope::Error naming
// the file as the student knows it.
std::string readSubmission(const Submission& s);

// The hash of the submission's bytes as they are now; nothing when they cannot be read (a link or
// a FIFO swapped in: the grading then says why).
std::optional<std::string> submissionHash(const Submission& s);

// The content hash of a kernel's bytes, as results record it.
std::string contentHash(const std::string& bytes);

}  // namespace convscope
