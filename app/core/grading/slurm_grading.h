// A class graded on a Slurm cluster (docs/class-mode.md): one array task per new or changed
// submission, each grading it as `convscope-cli grade DIR --only ID` does here
// (grade_submission.h) on a GPU of its own, then one merge job that times the course's references,
// re-times the top and writes the leaderboard (grade_class.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/core/grading/grading_settings.h"
#include "app/core/grading/submissions.h"

namespace convscope {

struct SlurmOptions {
  std::optional<std::string> partition;
  // Each task's GPU (and the merge job's, which times the references and re-times the top): a GRES
  // GPU is the job's alone, so a timing shares it with nothing. Nothing: --gres none, a cluster
  // without GPUs (the class is then only compiled; tests/slurm runs so).
  std::optional<std::string> gres = "gpu:1";
  // What the site needs in every job: --sbatch-arg lines (--account=..., --qos=..., --constraint=...,
  // --mem=..., --cpus-per-task=...) and --prolog lines run before the grader (module load ...).
  std::vector<std::string> sbatchArgs, prolog;
  int maxParallel = 8;
  bool wait = false, dryRun = false;
  int waitTimeoutSeconds = 3600;
  int retimeCount = 0;
};

// A line of a job script from the command line: one line; for --sbatch-arg an sbatch option's
// long name and value (account=course42 becomes #SBATCH --account=course42). Throws
// convscope::Error naming `option` when it cannot be one.
std::string scriptLine(const std::string& option, const std::string& value, bool sbatchOption);

// Writes RESULTS/slurm/ (the manifest and both job scripts) and submits them, or with
// o.dryRun only says them in `log`. With o.wait, waits for the merge job and says the summary.
// Throws convscope::Error with Slurm's own words when a command fails, and naming each failed
// task with the commands that grade it again here.
void gradeOnSlurm(const std::filesystem::path& dir, const std::filesystem::path& results, const SubmissionFolder& found,
                  const GradingSettings& settings, const SlurmOptions& o, bool anonymize, const GradingLog& log);

}  // namespace convscope
