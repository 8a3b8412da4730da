// Class mode's results folder (docs/class-mode.md): one JSON per graded submission under
// RESULTS/submissions/, the course variants' reference times in RESULTS/reference.json, and the
// merged ranking written from them as leaderboard.json, leaderboard.csv and a self-contained
// leaderboard.html. The grader (convscope-cli grade) writes the submissions; the merge is plain
// data work, so a Slurm merge job, `grade merge` by hand and the window all read the same files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace convscope {

inline constexpr int kClassResultsSchema = 1;
// No result file of a results folder is read past this size (a result is a few kilobytes).
inline constexpr uintmax_t kClassResultFileMaxBytes = 4u << 20;

// A submission's status, as the results name it (also the order of the unranked rows).
inline constexpr const char* kGradePassed = "passed";
// Correct, but a time below the physical floor (fair_timing.h): a person looks before it is ranked.
inline constexpr const char* kGradeFlagged = "flagged for review";
inline constexpr const char* kGradeWrong = "wrong";
inline constexpr const char* kGradeDoesNotCompile = "does not compile";
inline constexpr const char* kGradeBreaksContract = "breaks the contract";
inline constexpr const char* kGradeFaulted = "faulted";
inline constexpr const char* kGradeTimeLimit = "time limit";
// Its process held more host memory than the grading allows (grade --memory-limit).
inline constexpr const char* kGradeMemoryLimit = "memory limit";
inline constexpr const char* kGradeNoGpu = "compiled, not run: no GPU";
// The grading machine has no CUDA compiler (a build without CUDA, or no toolkit): nothing is said
// of the kernel, whose file was read and whose contract macros were checked.
inline constexpr const char* kGradeNoCompiler = "not graded: no CUDA compiler here";

// Whether a submission with this status counts as correct: counted so, ranked by its time, compared
// with cuDNN and re-timed (a new status that should be goes here, nowhere else). `status` is a
// result's "status" (a JSON string; anything else is not passed).
inline bool countsAsPassed(const nlohmann::json& status) {
  return status.is_string() && status == kGradePassed;
}

// The op-time batches every submission is timed at; the ranking uses the last one.
inline const std::vector<int> kGradeBatches = {100, 1000, 10000};

// The re-timing of the top of a ranking (grade --retime-top K), written by the grader as
// RESULTS/retime.json: {"gpu": name, "batch": B, "submissions": [{"id", "contentHash", "seconds"}
// or {"id", "contentHash", "failure"}]}, each a second fair timing of a passed submission, taken
// after the whole class was graded and in the reverse of the first order. A row re-timed on its
// table's GPU, whose file did not change since, shows its second op-time sum; the ranking stays
// by the first (every submission's, taken alike); a row whose re-timing failed is flagged for
// review; the table says whether the second timing kept the order, and how far timings spread.
inline constexpr const char* kRetimeFileName = "retime.json";

// Rows of one GPU (or of "no GPU"), ranked: passed first by the op-time sum at the largest batch
// (the first timing's), then the rest by status and id.
struct LeaderboardGroup {
  std::string gpu;           // "" for results graded without a GPU
  nlohmann::json reference;  // reference.json when it was timed on this GPU, else null
  std::vector<nlohmann::json> rows;
  int correct = 0, correctAndFasterThanCudnn = 0;
  std::string summary;  // "N submissions: C correct, F correct and faster than cuDNN"
  // "" when no row of this table was re-timed; else how many and whether the order held.
  std::string retimeSummary;
};

struct Leaderboard {
  std::vector<LeaderboardGroup> groups;
  std::vector<nlohmann::json> unreadable;  // {"file", "reason"}: a submission JSON that could not be read
  std::vector<nlohmann::json> skipped;     // {"path", "reason"}: entries of DIR that are no submission
  bool anonymized = false;
  std::string title;     // the course's words (--title: "Milestone 2, conv1"), "" when none
  std::string mergedAt;  // when this board was made, "2026-11-28 14:05 UTC"
  // Why the compiler of some submissions ran without its second wall (a kernel without Landlock:
  // app/core/util/file_sandbox.h), once per distinct reason; empty when every compile held it.
  std::vector<std::string> withoutSecondWall;
};

// Reads RESULTS/submissions/*.json (and reference.json), ranks, and, when `anonymize`, replaces
// every id (also inside messages) by its pseudonym from RESULTS/pseudonyms.csv (made here with a
// fresh secret on first use; that file and the secret stay in RESULTS and are not published).
Leaderboard buildLeaderboard(const std::filesystem::path& results, bool anonymize);

// Whether RESULTS is published anonymized. What was asked (--anonymize: true, --no-anonymize:
// false) is recorded in RESULTS/publication.json; a later grade or merge that asks nothing keeps
// the recorded choice (a run without the flag once rewrote an anonymized board with real ids).
// Throws convscope::Error naming the file when it cannot be read.
bool publishAnonymized(const std::filesystem::path& results, std::optional<bool> asked);

// The board's title (--title), recorded beside that choice and kept by later runs. Throws
// convscope::Error for more than one line of 200 characters.
void recordLeaderboardTitle(const std::filesystem::path& results, const std::string& title);

// Where submission `id`'s kernel file is, from RESULTS/submissions/ID.json's `path` (the file as
// graded): `file`, or, when the result cannot be read, names no file or the file is gone,
// `problem` (naming the result file and the kernel file).
struct SubmissionSource {
  std::filesystem::path file;
  std::string problem;
};
SubmissionSource submissionSource(const std::filesystem::path& results, const std::string& id);

// Writes leaderboard.json, leaderboard.csv and leaderboard.html into `results` (each atomically).
void writeLeaderboard(const std::filesystem::path& results, const Leaderboard& board);

// A published leaderboard.json read back (what a teacher opens in class: a folder with the board
// and no submissions/), every row checked before use: its id, status and message strings, its
// rank a whole number, its figures numbers or null, its op times an object of them; a reference
// with variants of the same form. Throws convscope::Error naming the file, and the row and field
// where it is wrong, for anything else (not JSON, another kind or schema, over 32 MB).
inline constexpr uintmax_t kPublishedLeaderboardMaxBytes = 32u << 20;
Leaderboard readPublishedLeaderboard(const std::filesystem::path& leaderboardJson);

// The same in memory (tests read them from the files).
nlohmann::json leaderboardToJson(const Leaderboard& board);
std::string leaderboardCsv(const Leaderboard& board);
std::string leaderboardHtml(const Leaderboard& board);

}  // namespace convscope
