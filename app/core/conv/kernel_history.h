// The history of a student's kernel file (docs/your-kernel.md, "History"): every version that
// compiled, with its source, its SASS where nvdisasm was there to make it, and its results as they
// arrived (the check, the op times). One folder per kernel file, named after the file and keyed by
// its absolute path, under the application's data folder; one small JSON file per version. A save
// that changes nothing in the source adds no version: its results update the last one. At most
// `maxVersions` are kept, the oldest dropped. A history file that is broken, too large or not
// ConvScope's is skipped with a message naming it, never a crash.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace convscope {

// $CONVSCOPE_KERNEL_HISTORY when set; else the application's data folder as Qt's
// QStandardPaths::AppDataLocation names it for the window ($XDG_DATA_HOME, else ~/.local/share,
// then ConvScope/convscope), and kernel-history in it. The CLI and the window share it.
std::filesystem::path kernelHistoryRoot();

struct KernelOpTime {
  int batch = 0;
  double seconds = 0.0;  // the sum over the conv layers of their median op time at this batch
};

struct KernelVersion {
  int number = 0;       // 1, 2, ... in the order saved; never reused, also after the oldest are dropped
  std::string savedAt;  // ISO 8601, UTC: when it first compiled
  std::string source;
  std::optional<std::string> sass;  // nvdisasm's listing of the compiled code
  std::string sassMissingReason;    // why there is none (no nvdisasm, compiled to PTX only)
  std::optional<bool> checkPassed;  // nothing until a check has run
  std::string checkSummary;
  std::vector<KernelOpTime> opTimes;  // ascending batch; empty until timed

  // What the history chart shows: the op time at batch 10,000, else at the largest batch timed.
  std::optional<KernelOpTime> chartedOpTime() const;
  // "passed", "failed", "compiled" (not checked yet).
  std::string status() const;
};

class KernelHistory {
 public:
  static constexpr size_t kDefaultMaxVersions = 200;
  static constexpr size_t kMaxSourceBytes = 1 << 20;        // a version's source; larger is not kept
  static constexpr size_t kMaxSassBytes = 16 << 20;         // larger SASS is not kept (the reason says so)
  static constexpr size_t kMaxVersionFileBytes = 24 << 20;  // a version file larger than this is skipped

  // The history of `kernelFile` (made absolute) under `root`; reads what is there.
  explicit KernelHistory(const std::filesystem::path& kernelFile, std::filesystem::path root = kernelHistoryRoot(),
                         size_t maxVersions = kDefaultMaxVersions);

  const std::filesystem::path& kernelFile() const { return kernelFile_; }
  const std::filesystem::path& folder() const { return folder_; }
  const std::vector<KernelVersion>& versions() const { return versions_; }  // oldest first
  const KernelVersion* version(int number) const;                           // nullptr: not kept
  // One line per history file that was skipped when reading: "FILE: why".
  const std::vector<std::string>& skipped() const { return skipped_; }

  // A compiled source: a new version, or the last one when its source is the same (then its SASS
  // is refreshed when this one has some). Returns the version's number. Throws convscope::Error
  // naming the kernel file when the source is larger than kMaxSourceBytes or the version cannot be
  // written.
  int recordCompiled(const std::string& source, const std::optional<std::string>& sass,
                     const std::string& sassMissingReason);
  // Results for version `number`; a version no longer kept is ignored (returns false).
  bool recordCheck(int number, bool passed, const std::string& summary);
  // Op-time sums, one per batch (a benchmark's: opTimeSumsPerBatch in engine/benchmark.h; the fair
  // timing's: `convscope-cli kernel time`).
  bool recordOpTimes(int number, std::vector<KernelOpTime> opTimes);

  void reload();

 private:
  void write(const KernelVersion& version);
  void dropOldest();

  std::filesystem::path kernelFile_, folder_;
  size_t maxVersions_;
  std::vector<KernelVersion> versions_;
  std::vector<std::string> skipped_;
  int highestFileNumber_ = 0;  // of every version file there, skipped ones too: a new number overwrites none
};

// SASS as two versions are compared: nvdisasm's instruction addresses ("/*0080*/") and encodings
// ("/* 0x000fe40000000f00 */") left out, and the lines then empty dropped. One instruction added
// shifts every address after it and a changed register changes its encoding; compared as printed,
// every line after the change would differ.
std::string comparableSass(const std::string& sass);

// The folder of `kernelFile`'s history under `root`: "<file name>-<16 hex digits of its absolute path's hash>".
std::filesystem::path kernelHistoryFolder(const std::filesystem::path& kernelFile, const std::filesystem::path& root);

}  // namespace convscope
