// One submission graded, and the timings a class's ranking stands on: the course's reference lines
// and the second timing of the top (docs/class-mode.md). The student's kernel is read once and
// compiled once in a sandboxed child (submitted_kernel.h); that one module is checked and timed in
// further children (UserKernelJob), so that the kernel timed is the kernel checked.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "app/core/grading/grading_settings.h"
#include "app/core/grading/submissions.h"

namespace convscope {

// Grades one submission here and writes RESULTS/submissions/ID.json; returns its result. Its seed
// is drawn now from the secure random source and published only in the result. `gpuCount` > 0:
// the steps take the GPU locks of a local run with several at once (gpu_locks.h).
nlohmann::json gradeSubmission(const std::filesystem::path& results, const Submission& s,
                               const GradingSettings& settings, int gpuCount, const GradingLog& log,
                               const KeepGoing& keepGoing);

// The course's GPU variants (cuDNN among them) timed once on this GPU as a student's kernel is:
// the leaderboard's reference lines, RESULTS/reference.json. Without a GPU the file says why.
void timeReferences(const std::filesystem::path& results, const GradingSettings& settings, const GradingLog& log,
                    const KeepGoing& keepGoing);
// Whether RESULTS/reference.json was timed with these settings.
bool referencesCurrent(const std::filesystem::path& results, const GradingSettings& settings);

// The top `count` passed submissions of this GPU's table timed a second time, once the whole
// class is graded, in the reverse of their order (so that none is always timed first or last):
// RESULTS/retime.json, which the merge reads (class_leaderboard.h).
void retimeTop(const std::filesystem::path& results, const GradingSettings& settings, int count, const GradingLog& log,
               const KeepGoing& keepGoing);

// The warning, once per grading, that the compiler's sandbox is missing on this machine.
std::string sandboxWarning(const std::string& description);

}  // namespace convscope
