// A whole class graded on this machine, merged into its leaderboard and exported to its students
// (docs/class-mode.md). Each submission is graded by convscope-cli in a child process ('grade DIR
// --out RESULTS --only ID', grade_submission.h), several at once; the merge (class_leaderboard.h)
// reads only the per-submission JSON files. The CLI's `grade` and the window's Class tab both call
// these; grading on a cluster is slurm_grading.h.
#pragma once

#include <filesystem>
#include <functional>

#include "app/core/grading/class_leaderboard.h"
#include "app/core/grading/grading_settings.h"
#include "app/core/grading/submissions.h"

namespace convscope {

struct ClassGrading {
  std::filesystem::path dir;      // the submissions
  std::filesystem::path results;  // where results, references and the leaderboard go
  GradingSettings settings;
  int jobs = 1;  // submissions graded at once
  int retimeCount = kDefaultRetimeCount;
  bool anonymize = false;  // the leaderboard's choice (publishAnonymized)
};

// How far a class's grading is: of `submissions`, `kept` unchanged since their grading, `graded`
// now, `notGraded` stopped before their end.
struct ClassGradingOutcome {
  int submissions = 0;
  int kept = 0;
  int graded = 0;
  int notGraded = 0;
  bool stopped = false;  // keepGoing() said no: what is finished is kept and merged
};
// Called once the kept results are known and after every submission's end (from the grading's
// worker threads, one at a time).
using ClassGradingProgress = std::function<void(const ClassGradingOutcome& sofar)>;

// Grades every new or changed submission of `found` (`request.jobs` children at once), times the
// course's references first when they are not current, re-times the top when all are graded, and
// merges. When keepGoing() says no, the children are stopped and what is finished is merged.
// Throws convscope::Error on a failure of the grader itself.
ClassGradingOutcome gradeClassHere(const ClassGrading& request, const SubmissionFolder& found, const GradingLog& log,
                                   const KeepGoing& keepGoing, const ClassGradingProgress& progress = {});

// RESULTS/leaderboard.json, .csv and .html from the results there; their summary said in `log`.
// `expectGpu`: the grading asked for a GPU, so a class where none ran is the grader's failure
// (throws convscope::Error saying what to ask the cluster for).
Leaderboard mergeClass(const std::filesystem::path& results, bool anonymize, const GradingLog& log,
                       bool expectGpu = false);

// RESULTS/skipped.json: the entries of the folder that are no submission, each with its reason.
void writeSkipped(const std::filesystem::path& results, const SubmissionFolder& found, const GradingLog& log);

// One small file per student, to upload or mail: what they got (status, message, figures), where
// they stand (rank of how many, on which GPU), how to repeat their check (the seed), and their
// pseudonym when the board is anonymized. ID.txt to read, ID.json for a course site; both the
// owner's alone until sent. Returns how many students' files were written.
int exportForStudents(const std::filesystem::path& results, const std::filesystem::path& out, const GradingLog& log);

}  // namespace convscope
