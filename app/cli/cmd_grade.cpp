// convscope-cli grade: a whole class's kernels compiled, checked, run on the test set, timed and
// ranked (docs/class-mode.md). Every submission is graded by this same program in a child process
// ('grade DIR --out RESULTS --only ID'), which reads the student's file once, has it compiled once
// in a sandboxed child (submitted_kernel.h) and runs that module in further children
// (UserKernelJob): N of them at once locally, or one Slurm array task each on a cluster. The merge
// (class_leaderboard.h) reads only the per-submission JSON files, wherever they were written.
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/class_leaderboard.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/fair_timing.h"
#include "app/core/engine/submitted_kernel.h"
#include "app/core/engine/user_kernel_job.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/child_process.h"
#include "app/core/util/error.h"
#include "app/core/util/json_file.h"
#include "gpu/fair_timing_harness.h"
#include "gpu/user_kernel.h"

namespace convscope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kHelp = R"(usage: convscope-cli grade DIR --out RESULTS [--jobs N] [--only ID]
                           [--anonymize | --no-anonymize] [--title TEXT]
                           [--retime-top K] [--time-limit SECONDS] [--memory-limit MB]
                           [--model FILE.onnx] [--data DIR]
       convscope-cli grade DIR --out RESULTS --slurm [--partition P] [--gres GRES|none]
                           [--sbatch-arg NAME=VALUE ...] [--prolog LINE]
                           [--max-parallel K] [--wait] [--wait-timeout SECONDS] [--dry-run]
                           [options above]
       convscope-cli grade merge RESULTS [--anonymize | --no-anonymize] [--time-references]
                           [--retime-top K] [--time-limit SECONDS] [--memory-limit MB]
                           [--model FILE.onnx] [--data DIR] [--title TEXT]
       convscope-cli grade export RESULTS --out FOLDER

Grades a class's kernels and ranks them (docs/class-mode.md). Each submission in DIR is a FILE.cu
or a folder holding exactly one .cu; its name is the student's id. Anything else is reported and
skipped, symbolic links and whatever is not a regular file included. Each submission is read
once, compiled once in a sandboxed process, checked on 12 random shapes and the model's conv
layers (from a seed of its own, drawn from the system's secure random source when its grading
starts and published in its result
afterwards), run on the 10,000 test images and timed at batches 100, 1,000 and 10,000, each step
in a child process with a time limit. Results: RESULTS/submissions/ID.json, merged into
RESULTS/leaderboard.json, .csv and .html: correct submissions first, ranked by their conv op-time
sum at batch 10,000, one table per GPU. A submission whose file and settings have not changed
since its last grading keeps its result and is not graded again.
  --jobs N            grade N submissions at once: they compile and are checked side by side, but
                      while one is timed nothing else of the grading runs on the machine (with
                      several GPUs: one timing per GPU, each on its own share of the CPU cores)
  --only ID           grade this submission alone (what each Slurm array task runs)
  --anonymize         the published leaderboard (leaderboard.json, .csv, .html) shows stable
                      pseudonyms, not ids, and no file names; the mapping stays in
                      RESULTS/pseudonyms.csv, readable by its owner alone. The choice is recorded
                      in RESULTS: every later grade and merge keeps it
  --no-anonymize      publish the ids again (recorded likewise)
  --title TEXT        the leaderboard's title, such as 'Milestone 2: conv1 and conv2' (recorded
                      likewise; the page also says when it was merged)
  --retime-top K      once the class is graded, time the K fastest correct submissions a second
                      time, slowest of them first; the leaderboard says whether their order held
                      (default 5; 0: none)
  --time-limit S      the time limit of each step's child process (default 120 s)
  --memory-limit MB   the host memory one inference of a submission may take (default: half of
                      this machine's, in a Slurm job half of its allocation); a kernel's process
                      that holds more than that plus 2,000 MB (for the CUDA libraries and the
                      compiler) is stopped (status 'memory limit')
  --model FILE.onnx   the network the kernels run (default: the course's course-high.onnx)
  --data DIR          its test set (default: $CONVSCOPE_DATA, else
                      /usr/share/datasets/fashion-mnist)
  --slurm             write an sbatch array script (one task per new or changed submission) and a
                      merge job that depends on it (afterok), and submit both; when no task got a
                      GPU the merge job fails saying so. --dry-run prints them and writes nothing.
                      A task's --time is 3 time limits (compile, test set, timing) and 2 minutes
  --partition P       the Slurm partition both jobs run in (default: the cluster's default)
  --gres GRES         the generic resources each task and the merge job request (default gpu:1:
                      a GPU of its own; none: request nothing, where the cluster has no GPUs and
                      the class is only compiled)
  --max-parallel K    the array's throttle (%K, default 8)
  --sbatch-arg NAME=VALUE ...
                      sbatch options for both jobs, without their dashes: account=course42
                      qos=normal constraint=h100 mem=32G cpus-per-task=4 (each becomes an
                      #SBATCH --NAME=VALUE line); the site's rules decide which it needs
  --prolog LINE       a shell line both jobs run before the grader, such as 'module load
                      cuda/13.0' (repeatable)
  --wait              wait for the merge job (squeue, every 1 s at first, then up to 30 s apart)
                      and print the summary, or which tasks failed with the commands that grade
                      them again; give up after --wait-timeout seconds (default 3600; the jobs
                      go on)
  export RESULTS      one file per student into --out FOLDER (ID.txt to mail, ID.json for a
                      course site): status, message, figures, rank, the seed that repeats the
                      check and, when anonymized, the student's pseudonym
  merge RESULTS       write the leaderboard from the submissions' results (a grading ends with
                      it; it can also be run by hand); --time-references first times the course's
                      variants on the GPU here, and --retime-top K re-times the top K here (both
                      are what the Slurm merge job runs)
Exit code: 0 when every submission got a status (whatever it is), 1 on an error of the grader,
130 when interrupted (Ctrl+C; the finished results are kept and merged).
)";

// One kernel's outcome on the network must equal the course variants' prediction count within
// the five images in 10,000 that the tensor-core variants are allowed (tests/gpu).
constexpr int kAccuracyToleranceImages = 5;
constexpr int kCheckShapes = 12;
constexpr const char* kSubmissionKind = "convscope-class-submission";
// How many of the top of the ranking are timed a second time to confirm their order.
constexpr int kDefaultRetimeCount = 5;

std::atomic<bool> g_interrupted{false};
void onInterrupt(int) {
  g_interrupted = true;
}

struct Submission {
  std::string id;
  fs::path root;         // DIR
  fs::path file;         // the .cu: root / relative
  std::string relative;  // its path under DIR, as the student knows it: every message names it so
};

struct Discovery {
  std::vector<Submission> submissions;
  std::vector<json> skipped;  // {"path", "reason"}
};

std::string readWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read it");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string nowIso() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

// An id becomes a file name, a line of the Slurm manifest and a command-line argument: only
// letters, digits, '.', '_' and '-', not starting with '.' or '-'.
bool isSafeId(const std::string& id) {
  // Not starting with '-' either: '--only -x' would read the id as an option.
  static const std::regex safe(R"([A-Za-z0-9_][A-Za-z0-9._-]*)");
  return std::regex_match(id, safe);
}

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

// Every entry of DIR, sorted: a submission, or skipped with its reason. Types are read with lstat
// semantics (symlink_status): a link is never followed, so it is refused whatever it points to.
Discovery discoverSubmissions(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": not a folder of submissions");
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  Discovery found;
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

// A file descriptor closed when it goes out of scope (closing a lock file releases its lock).
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

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

struct GradeSettings {
  fs::path model, data;
  int timeLimitSeconds = 120;
  std::optional<int> memoryLimitMb;
};

GradeSettings readSettings(const Args& args) {
  GradeSettings s;
  s.model = args.value("model").value_or(defaultModelPath());
  s.data = args.value("data").value_or(defaultDataFolder().string());
  s.timeLimitSeconds = args.intValue("time-limit", 120, 1);
  if (args.has("memory-limit")) s.memoryLimitMb = args.intValue("memory-limit", 0, 1);
  return s;
}

// The options a child or a Slurm task needs to grade with the same settings.
std::vector<std::string> settingsOptions(const GradeSettings& s) {
  std::vector<std::string> options = {"--model",      fs::absolute(s.model).string(),
                                      "--data",       fs::absolute(s.data).string(),
                                      "--time-limit", std::to_string(s.timeLimitSeconds)};
  if (s.memoryLimitMb) options.insert(options.end(), {"--memory-limit", std::to_string(*s.memoryLimitMb)});
  return options;
}

json clocksJson() {
  const gpu::GpuClocks clocks = gpu::gpuPeakClocks();
  if (clocks.smMHz <= 0) return nullptr;
  return {{"smPeakMHz", clocks.smMHz}, {"memoryPeakMHz", clocks.memoryMHz}};
}

json gpuJson() {
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) return nullptr;
  return {{"name", gpu.name},
          {"computeCapability", std::to_string(gpu.computeMajor) + "." + std::to_string(gpu.computeMinor)},
          {"multiprocessors", gpu.multiprocessors},
          {"memoryGiB", gpu.memoryGiB},
          {"driver", gpu.driverVersion},
          {"cudaRuntime", gpu.runtimeVersion},
          {"cudnn", gpu.cudnnVersion},
          // The clocks a result was taken under: the GPU's peak SM and memory clocks as the CUDA
          // runtime reports them (the current clock under boost is not reported reliably).
          {"clocks", clocksJson()}};
}

// What must match for a kept result to stand: a change to any of these regrades everything.
json settingsJson(const GradeSettings& s) {
  const GpuInfo& gpu = gpuInfo();
  json settings = {{"model", s.model.filename().string()},
                   {"modelHash", hex64(sipHash24(readWholeFile(s.model), 0, 0))},
                   {"batches", kGradeBatches},
                   {"shapes", kCheckShapes},
                   {"timeLimitSeconds", s.timeLimitSeconds},
                   {"memoryLimitMb", s.memoryLimitMb ? json(*s.memoryLimitMb) : json(nullptr)},
                   {"convscopeVersion", CONVSCOPE_VERSION},
                   {"gpu", gpu.usable ? gpu.name : ""}};
  return settings;
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

fs::path resultFile(const fs::path& results, const std::string& id) {
  return results / "submissions" / (id + ".json");
}

// The kept result when the file and the settings are as they were, else nothing.
std::optional<json> keptResult(const fs::path& results, const Submission& s, const json& settings) {
  const fs::path file = resultFile(results, s.id);
  if (!fs::exists(file)) return std::nullopt;
  try {
    json kept = parseJsonText(readWholeFile(file), file.string());
    const std::optional<std::string> hash = submissionHash(s);
    if (hash && kept.value("schema", 0) == kClassResultsSchema && kept.value("contentHash", "") == *hash &&
        kept.value("settings", json()) == settings)
      return kept;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// An older ConvScope kept one seed for a whole grading run in RESULTS/grading-run.json and reused
// it for every later --only; each grading now draws its own, so that file would only mislead.
void removeOldGradingRunRecord(const fs::path& results) {
  std::error_code ignored;
  fs::remove(results / "grading-run.json", ignored);
}

// A seed nobody can predict, drawn when a submission's grading starts: its check's shapes and
// values and its timing's inputs. It reaches the kernel's process in a private file, never on a
// command line (user_kernel_job.h), and is published in the result once the grading is over.
uint64_t freshGradingSeed() {
  uint64_t seed = 0;
  while (seed == 0) seed = secureRandom64();
  return seed;
}

// GPUs of this machine without initialising CUDA: CUDA_VISIBLE_DEVICES' entries when set, else
// the driver's folder per GPU.
std::vector<std::string> visibleGpus() {
  std::vector<std::string> gpus;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream list(visible);
    for (std::string entry; std::getline(list, entry, ',');)
      if (!entry.empty()) gpus.push_back(entry);
    return gpus;
  }
  std::error_code error;
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc/driver/nvidia/gpus", error)) {
    (void)entry;
    ++count;
  }
  for (int i = 0; i < count; ++i) gpus.push_back(std::to_string(i));
  if (gpus.empty() && gpuInfo().usable) gpus.push_back("0");
  return gpus;
}

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Timings that share nothing: no module load, compile or host check of another submission on the
// GPU or the CPU cores of a submission while it is timed, however many are graded at once (--jobs).
// Per GPU k, a reader-writer lock across the grader's processes, made of two files under RESULTS:
//   .gpu-K.lock        compiles and checks hold it shared; a timing holds it exclusive;
//   .gpu-K.turnstile   whoever wants .gpu-K.lock passes through it (holds it exclusive a moment);
//                      a timing keeps holding it while it waits, so that no new compile or check
//                      gets in and a stream of them cannot starve the timing.
// A compile or a check takes every GPU's lock shared, in order 0, 1, ...: it works on the CPU, which
// every timing's host code shares, and a check also runs a kernel on one of the GPUs. A timing takes
// one GPU's lock exclusive: while it runs, nothing else of the grading runs on the machine but the
// timings of the other GPUs, and with several GPUs each timing is pinned to its own share of the
// CPU cores (the kernel's child inherits it), so that one timing's module load cannot run on
// another's cores. No deadlock: a timing holds one turnstile and waits for one lock; a compile
// holding the locks below k waits only for turnstile k, and whoever holds lock k shared waits only
// for higher ones. flock(2): the kernel releases the locks when a process ends, however it ends; the
// files are opened O_CLOEXEC, so no kernel's process inherits them. Not used under Slurm (each task
// has a GPU of its own, and RESULTS is then on a shared file system whose locks could span nodes)
// nor without a GPU (nothing is timed).
class GpuLocks {
 public:
  // What one step holds until it ends.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& other) noexcept
        : device(std::move(other.device)),
          startedAt(other.startedAt),
          waitedSeconds(other.waitedSeconds),
          fds_(std::move(other.fds_)),
          pinned_(std::exchange(other.pinned_, false)),
          before_(other.before_) {}
    Hold& operator=(Hold&&) = delete;
    ~Hold() {
      if (pinned_) ::sched_setaffinity(0, sizeof before_, &before_);
    }
    std::string device;          // the CUDA_VISIBLE_DEVICES the step runs with; "" when not set here
    double startedAt = 0.0;      // Unix time, once the locks were held
    double waitedSeconds = 0.0;  // how long the step waited for them

   private:
    friend class GpuLocks;
    std::vector<UniqueFd> fds_;
    bool pinned_ = false;
    cpu_set_t before_{};
  };

  // `gpuCount` 0: no locks (Slurm, no GPU).
  GpuLocks(const fs::path& results, int gpuCount) : results_(results), count_(std::max(0, gpuCount)) {
    if (count_ > 0) gpus_ = visibleGpus();  // before any step sets CUDA_VISIBLE_DEVICES here
  }

  // A compile or a check: every GPU's lock, shared; the check's kernel runs on one GPU of them.
  Hold shared() const {
    Hold hold;
    const double asked = unixSeconds();
    for (int k = 0; k < count_; ++k) {
      const UniqueFd turnstile = openLock(turnstilePath(k));
      lock(turnstile, LOCK_EX, turnstilePath(k));
      hold.fds_.push_back(openLock(lockPath(k)));
      lock(hold.fds_.back(), LOCK_SH, lockPath(k));
    }  // each turnstile is let go as soon as its lock is held
    if (count_ > 0) useGpu(hold, static_cast<int>(::getpid() % count_));
    hold.startedAt = unixSeconds();
    hold.waitedSeconds = hold.startedAt - asked;
    return hold;
  }

  // A timing: one GPU's lock, exclusive (a free GPU when there is one), and that GPU's cores.
  Hold exclusive() const {
    Hold hold;
    const double asked = unixSeconds();
    if (count_ > 0) {
      const int first = static_cast<int>(::getpid() % count_);
      int gpu = -1;
      while (gpu < 0) {
        for (int i = 0; i < count_ && gpu < 0; ++i) {
          const int k = (first + i) % count_;
          UniqueFd fd = openLock(lockPath(k));
          if (tryLock(fd, LOCK_EX, lockPath(k))) {
            hold.fds_.push_back(std::move(fd));
            gpu = k;
          }
        }
        // None free: hold a GPU's turnstile, so that no new compile or check starts, and wait for
        // that GPU's lock (the steps holding it end within their time limits).
        for (int i = 0; i < count_ && gpu < 0; ++i) {
          const int k = (first + i) % count_;
          const UniqueFd turnstile = openLock(turnstilePath(k));
          if (!tryLock(turnstile, LOCK_EX, turnstilePath(k))) continue;
          hold.fds_.push_back(openLock(lockPath(k)));
          lock(hold.fds_.back(), LOCK_EX, lockPath(k));
          gpu = k;
        }
        // Every GPU already has a timing waiting for it: look again in a moment.
        if (gpu < 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      useGpu(hold, gpu);
      pinToShareOfCores(hold, gpu);
    }
    hold.startedAt = unixSeconds();
    hold.waitedSeconds = hold.startedAt - asked;
    return hold;
  }

 private:
  fs::path lockPath(int k) const { return results_ / (".gpu-" + std::to_string(k) + ".lock"); }
  fs::path turnstilePath(int k) const { return results_ / (".gpu-" + std::to_string(k) + ".turnstile"); }

  static UniqueFd openLock(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw Error(path.string() + ": cannot open the grader's lock file: " + std::strerror(errno));
    return UniqueFd(fd);
  }
  static void lock(const UniqueFd& fd, int operation, const fs::path& path) {
    while (::flock(fd.get(), operation) != 0)
      if (errno != EINTR) throw Error(path.string() + ": cannot lock it: " + std::strerror(errno));
  }
  static bool tryLock(const UniqueFd& fd, int operation, const fs::path& path) {
    while (::flock(fd.get(), operation | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) return false;
      if (errno != EINTR) throw Error(path.string() + ": cannot lock it: " + std::strerror(errno));
    }
    return true;
  }

  // With several GPUs, the step's kernel process sees only its GPU.
  void useGpu(Hold& hold, int k) const {
    if (count_ > 1 && k < static_cast<int>(gpus_.size())) {
      ::setenv("CUDA_VISIBLE_DEVICES", gpus_[k].c_str(), 1);
      hold.device = gpus_[k];
    }
  }

  // With several GPUs, timing k runs on the k-th of count_ equal shares of this process's cores.
  void pinToShareOfCores(Hold& hold, int k) const {
    if (count_ < 2) return;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    const size_t share = cpus.size() / static_cast<size_t>(count_);
    if (share == 0) return;  // fewer cores than GPUs: the timings share the cores
    cpu_set_t mine;
    CPU_ZERO(&mine);
    for (size_t j = share * static_cast<size_t>(k); j < share * static_cast<size_t>(k + 1); ++j)
      CPU_SET(cpus[j], &mine);
    if (::sched_setaffinity(0, sizeof mine, &mine) == 0) {
      hold.pinned_ = true;
      hold.before_ = allowed;
    }
  }

  fs::path results_;
  int count_;
  std::vector<std::string> gpus_;
};

// The student's file named as the student knows it, not by the grader's folders.
std::string relativeMessage(std::string message, const Submission& s) {
  const std::string full = s.file.string();
  for (size_t at = message.find(full); at != std::string::npos; at = message.find(full, at))
    message.replace(at, full.size(), s.relative);
  if (message.size() > 2000) message = message.substr(0, 2000) + " ...";
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

// A failed child step in the status words.
std::string statusOfFailure(const UserKernelJobResult& r) {
  if (r.stage == "compile") return kGradeDoesNotCompile;
  if (r.processDied && r.failure.find(": memory limit: ") != std::string::npos) return kGradeMemoryLimit;
  if (r.processDied && r.failure.find("time limit") != std::string::npos) return kGradeTimeLimit;
  if (r.processDied) return kGradeFaulted;
  return kGradeWrong;
}

std::string firstLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// A checked kernel's fair timing (docs/your-kernel.md, "How a kernel is timed fairly"): fresh
// inputs every repetition and each repetition's output checked here, in this process; the
// references are timed the same way (timeReferences), so the speed-ups compare like with like.
struct FairTimingOutcome {
  UserKernelJobResult result;
  std::map<int, double> sums;  // batch -> the conv layers' median op times, summed
  json spread = json::object();
  std::string belowFloor;  // the first layer timed below its physical floor, in words
};

FairTimingOutcome timeFairly(UserKernelJob job) {
  job.task = UserKernelJob::Task::Timing;
  job.batches = kGradeBatches;
  FairTimingOutcome timing;
  timing.result = runUserKernelJob(
      job, [](const std::string&) {}, [] { return !g_interrupted.load(); });
  for (const UserKernelJobResult::LayerTiming& layer : timing.result.timings) {
    timing.sums[layer.batch] += layer.timing.time.median;
    timing.spread[std::to_string(layer.batch)][layer.timing.node] = {
        {"median", layer.timing.time.median}, {"min", layer.timing.time.min}, {"max", layer.timing.time.max}};
    if (layer.timing.belowPhysicalFloor && timing.belowFloor.empty())
      timing.belowFloor = layer.timing.problem.describe() + " at batch " + std::to_string(layer.batch) + " took " +
                          std::to_string(layer.timing.time.median * 1e3) + " ms, below the physical floor of " +
                          std::to_string(layer.timing.floorSeconds * 1e3) + " ms";
  }
  return timing;
}

// The job that checks or times one submission's kernel in a child process: the module compiled
// once (submitted_kernel.h), so that the kernel timed is the kernel checked.
UserKernelJob gradingJob(const std::shared_ptr<const SubmittedKernel>& kernel, const GradeSettings& settings,
                         uint64_t seed) {
  UserKernelJob job;
  job.program = thisProgram();
  job.kernel = kernel;
  job.shapes = kCheckShapes;
  job.seed = seed;
  job.network = true;
  job.model = settings.model;
  job.data = settings.data;
  job.timeLimitSeconds = settings.timeLimitSeconds;
  return job;
}

SubmittedKernelOptions compileOptions(const GradeSettings& settings) {
  SubmittedKernelOptions options;
  options.program = thisProgram();
  options.architecture = "";  // the GPU here, else sm_90
  options.compileTimeLimitSeconds = settings.timeLimitSeconds;
  return options;
}

// Whether the compiler's process held the second wall (app/core/util/file_sandbox.h).
json sandboxJson(const SandboxReport& sandbox) {
  return {{"enforced", sandbox.enforced},
          {"landlockAbi", sandbox.abi},
          {"reason", sandbox.reason},  // why not, when not enforced ("" when it is)
          {"description", sandbox.describe()}};
}

std::string sandboxWarning(const std::string& description) {
  return "warning: the compiler's sandbox, the second wall around a student's kernel, is missing on this machine (" +
         description + "): only the #include filter keeps a kernel from the machine's files";
}

// Grades one submission and writes RESULTS/submissions/ID.json; returns its result. `gpuCount` > 0:
// the steps take the GPU locks (GpuLocks) of a local run with --jobs.
json gradeSubmission(const fs::path& results, const Submission& s, const GradeSettings& settings, int gpuCount) {
  const auto started = std::chrono::steady_clock::now();
  const uint64_t seed = freshGradingSeed();
  json r = {{"schema", kClassResultsSchema},
            {"kind", kSubmissionKind},
            {"id", s.id},
            {"file", s.relative},
            // Where the window's Class tab opens it from (`file` is relative to a DIR the results do not record).
            {"path", fs::absolute(s.file).lexically_normal().string()},
            {"contentHash", nullptr},
            {"settings", settingsJson(settings)},
            {"seed", std::to_string(seed)},  // a string: JSON readers that hold numbers as doubles lose digits
            {"gpu", gpuJson()},
            {"accuracy", nullptr},
            {"opTimeSeconds", json::object()},
            {"registers", nullptr},
            {"occupancy", nullptr},
            {"sandbox", nullptr},
            {"steps", json::array()}};
  // The result is written only now that the grading is over: the seed is published then.
  const auto finish = [&](const std::string& status, const std::string& message) {
    r["status"] = status;
    r["message"] = relativeMessage(message, s);
    // A kernel that ran and failed: the seed that gives the same shapes and inputs again.
    if (status == kGradeWrong || status == kGradeFaulted || status == kGradeTimeLimit || status == kGradeMemoryLimit)
      r["message"] = r["message"].get<std::string>() + " (seed " + std::to_string(seed) +
                     ": convscope-cli kernel check " + s.relative + " --seed " + std::to_string(seed) +
                     " repeats the check)";
    r["gradedAt"] = nowIso();
    r["gradingSeconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fs::create_directories(results / "submissions");
    writeFileAtomically(resultFile(results, s.id), r.dump(2) + "\n");
    return r;
  };
  const auto keepGoing = [] { return !g_interrupted.load(); };
  const GpuLocks locks(results, gpuCount);
  // When each step held the machine, and for how long it waited for it (GpuLocks).
  const auto recordStep = [&](const std::string& step, const GpuLocks::Hold& hold) {
    json entry = {{"step", step},
                  {"startedAt", hold.startedAt},
                  {"endedAt", unixSeconds()},
                  {"waitedSeconds", hold.waitedSeconds}};
    if (!hold.device.empty()) entry["gpuDevice"] = hold.device;
    r["steps"].push_back(entry);
  };

  // The file is read once: the bytes hashed are the bytes compiled, checked, run and timed.
  std::string bytes;
  try {
    bytes = readSubmission(s);
  } catch (const Error& e) {
    return finish(kGradeBreaksContract, e.what());
  }
  std::shared_ptr<const SubmittedKernel> kernel;
  {
    // Compiling is CPU work: never beside a timing.
    const GpuLocks::Hold hold = locks.shared();
    kernel = submitKernelText(bytes, s.relative, compileOptions(settings), keepGoing);
    recordStep("compile", hold);
  }
  r["contentHash"] = kernel->contentHash;
  if (!kernel->source.ok()) {
    std::string message;
    for (const KernelDiagnostic& d : kernel->source.problems) message += (message.empty() ? "" : "; ") + d.text();
    return finish(kGradeBreaksContract, message);
  }
  // Without a compiler here nothing can be said of the kernel: not the student's fault.
  if (const std::string why = gpu::userKernelCompilerUnavailableReason(); !why.empty())
    return finish(kGradeNoCompiler, "not compiled on this grading machine: " + why);
  if (kernel->compilerFailure.empty()) {
    r["sandbox"] = sandboxJson(kernel->sandbox);
    if (!kernel->sandbox.enforced) std::cerr << sandboxWarning(kernel->sandbox.describe()) << "\n";
  } else if (!kernel->childDetail.empty()) {  // for the course staff, not in the student's message
    std::cerr << s.id << ": the compiler's process " << kernel->compilerFailure << ": " << kernel->childDetail << "\n";
  }
  // One compile gives the verdict and the figures (registers, occupancy) for the GPU here, or for
  // sm_90 where there is none.
  const UserKernelInspection& inspection = kernel->inspection;
  if (!kernel->ok()) {
    bool contract = false;
    for (const KernelDiagnostic& e : kernel->compiled.errors)
      contract = contract || e.message.find("breaks the contract") != std::string::npos;
    return finish(contract ? kGradeBreaksContract : kGradeDoesNotCompile, kernel->compiled.errorText());
  }
  if (inspection.resources.found) r["registers"] = inspection.resources.registers;
  if (inspection.occupancy) r["occupancy"] = inspection.occupancy->fraction();
  r["figuresFrom"] = inspection.figuresFrom;
  if (const GpuInfo& gpu = gpuInfo(); !gpu.usable)
    return finish(kGradeNoGpu, "compiled for " + kernel->compiled.architecture + "; not run: no GPU can run it here (" +
                                   gpu.unusableReason + ")");

  if (settings.memoryLimitMb) ::setenv("CONVSCOPE_MEMORY_LIMIT_MB", std::to_string(*settings.memoryLimitMb).c_str(), 1);
  // The check and the timing run the same compiled module; only the timing has the machine to itself.
  const UserKernelJob job = gradingJob(kernel, settings, seed);
  UserKernelJobResult check;
  {
    const GpuLocks::Hold hold = locks.shared();
    check = runUserKernelJob(
        job, [](const std::string&) {}, keepGoing);
    recordStep("check", hold);
  }
  r["shapesChecked"] = check.shapesChecked;
  if (check.accuracy) r["accuracy"] = *check.accuracy;
  if (check.courseAccuracy) r["courseAccuracy"] = *check.courseAccuracy;
  if (!check.passed) return finish(statusOfFailure(check), check.failure);
  if (check.accuracy && check.courseAccuracy &&
      std::abs(*check.accuracy - *check.courseAccuracy) * 10000 > kAccuracyToleranceImages + 0.5)
    return finish(kGradeWrong, "the network's accuracy with this kernel, " + std::to_string(*check.accuracy) +
                                   ", differs from the course variants' " + std::to_string(*check.courseAccuracy) +
                                   " by more than " + std::to_string(kAccuracyToleranceImages) + " images");
  FairTimingOutcome timing;
  {
    const GpuLocks::Hold hold = locks.exclusive();
    // Which of the machine's GPUs timed it (several GPUs: each timing's child sees only its own).
    if (!hold.device.empty())
      r["gpuDevice"] = hold.device;
    else if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))  // a Slurm task's GPU
      r["gpuDevice"] = visible;
    timing = timeFairly(job);
    recordStep("timing", hold);
  }
  if (!timing.result.passed) return finish(statusOfFailure(timing.result), timing.result.failure);
  std::string message = firstLine(check.summary);
  if (!timing.result.fallbacks.empty())  // its time would leave out a layer: correct, not ranked by time
    return finish(kGradePassed, message + "; not ranked by time: it declines " + timing.result.fallbacks.front());
  r["timingSpread"] = timing.spread;
  for (const auto& [batch, sum] : timing.sums) r["opTimeSeconds"][std::to_string(batch)] = sum;
  if (!timing.belowFloor.empty()) return finish(kGradeFlagged, timing.belowFloor + ": flagged for review, not ranked");
  return finish(kGradePassed, message);
}

// The course's GPU variants and cuDNN timed once on this GPU: the leaderboard's reference lines.
void timeReferences(const fs::path& results, const GradeSettings& settings) {
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) {
    writeFileAtomically(results / "reference.json",
                        json({{"schema", kClassResultsSchema},
                              {"gpu", nullptr},
                              {"reason", "no GPU: the course's variants were not timed (" + gpu.unusableReason + ")"}})
                                .dump(2) +
                            "\n");
    return;
  }
  BenchmarkOptions options;
  options.model = settings.model;
  options.batches = kGradeBatches;
  for (const ConvVariant& v : convVariants())
    if (v.requirements.gpu && v.unavailableReason().empty())  // course rows only: students' are not in convVariants()
      options.variants.push_back(v.id);
  std::cout << "timing the course's " << options.variants.size() << " GPU variants for the reference lines\n"
            << std::flush;
  // The model's conv layers at each batch, from one pass of the network (any variant: the shapes
  // are the model's), then every variant timed on them by the students' timer.
  const ImageSet images = ImageSet::loadIdxImages(settings.data);
  const std::shared_ptr<const Model> model = loadOnnxModel(settings.model);
  std::map<int, std::vector<ConvProblem>> layers;
  for (const int batch : kGradeBatches) {
    Engine engine(model, options.variants.front());
    for (const ConvLayerTime& t : convLayersAtBatch(engine, images, batch)) layers[batch].push_back(t.problem);
  }
  const std::unique_ptr<Device> device = createGpuDevice();
  const std::optional<DevicePeaks> peaks = devicePeaksOf(localDeviceFigures());
  json variants = json::array();
  for (const std::string& id : options.variants) {
    if (g_interrupted.load()) break;
    const ConvVariant& row = findConvVariant(id);
    json times = json::object();
    std::string declined;
    for (const auto& [batch, problems] : layers) {
      double sum = 0.0;
      for (size_t l = 0; l < problems.size() && declined.empty(); ++l) {
        if (const std::string why = row.unsupportedReason ? row.unsupportedReason(problems[l]) : ""; !why.empty()) {
          declined = problems[l].describe() + ": " + why;
          break;
        }
        gpu::FairTimingPlan plan;
        plan.problem = problems[l];
        plan.layer = static_cast<int>(l);
        plan.runSeed = secureRandom64();
        plan.sampleSeed = secureRandom64();
        FairLayerTiming timed;
        timed.problem = problems[l];
        // A course variant is held to its own tolerance (TF32's products are rounded).
        judgeLayerTiming(timed, gpu::timeConvFairly(row, *device, plan), plan.sampleSeed, plan.sampleCount, peaks, id,
                         std::max(kUserKernelRelativeTolerance, row.relativeTolerance));
        if (!timed.rejected.empty()) {  // no reference line from it; the class is still graded
          declined = "failed its own timing: " + timed.rejected;
          std::cerr << "warning: the course's variant " << id << " " << declined << "\n";
          break;
        }
        sum += timed.time.median;
      }
      if (declined.empty()) times[std::to_string(batch)] = sum;
    }
    json entry = {
        {"id", id}, {"displayName", row.displayName}, {"opTimeSeconds", declined.empty() ? times : json::object()}};
    if (!declined.empty()) entry["declined"] = declined;
    variants.push_back(entry);
  }
  writeFileAtomically(results / "reference.json", json({{"schema", kClassResultsSchema},
                                                        {"gpu", gpuJson()},
                                                        {"timedAt", nowIso()},
                                                        {"settings", settingsJson(settings)},
                                                        {"variants", variants}})
                                                          .dump(2) +
                                                      "\n");
}

bool referencesCurrent(const fs::path& results, const GradeSettings& settings) {
  const fs::path file = results / "reference.json";
  if (!fs::exists(file)) return false;
  try {
    const json reference = parseJsonText(readWholeFile(file), file.string());
    return reference.value("settings", json()) == settingsJson(settings);
  } catch (const std::exception&) {
    return false;
  }
}

// --anonymize, --no-anonymize or neither (the recorded choice stands: publishAnonymized).
std::optional<bool> anonymizeAsked(const Args& args) {
  if (args.has("anonymize") && args.has("no-anonymize")) throw Error("grade: --anonymize or --no-anonymize, not both");
  if (args.has("anonymize")) return true;
  if (args.has("no-anonymize")) return false;
  return std::nullopt;
}

int merge(const fs::path& results, bool anonymize, bool expectGpu = false) {
  const Leaderboard board = buildLeaderboard(results, anonymize);
  writeLeaderboard(results, board);
  // The jobs asked for a GPU and no task got one: the class is not graded, whatever the statuses say.
  if (expectGpu) {
    bool anyGpu = false, anyUnrun = false;
    for (const LeaderboardGroup& g : board.groups) {
      anyGpu = anyGpu || !g.gpu.empty();
      for (const json& row : g.rows) anyUnrun = anyUnrun || row["status"] == kGradeNoGpu;
    }
    if (!anyGpu && anyUnrun)
      throw Error(
          "no task of this grading had a GPU: every kernel was compiled but not run. The jobs asked for one "
          "with --gres; ask for a GRES your cluster has (sinfo -o '%P %G' lists them, e.g. --gres "
          "gpu:a100:1) or a partition with GPUs (--partition), and grade again");
  }
  for (const LeaderboardGroup& g : board.groups) std::cout << g.summary << "\n";
  if (board.groups.size() > 1)
    std::cout << "(results from " << board.groups.size()
              << " different GPUs: separate tables, never ranked together)\n";
  for (const json& u : board.unreadable)
    std::cout << "not merged: " << u["file"].get<std::string>() << ": " << u["reason"].get<std::string>() << "\n";
  std::cout << "leaderboard: " << (results / "leaderboard.html").string() << "\n";
  return 0;
}

// The top `count` passed submissions of this GPU's table timed a second time, once the whole
// class is graded, in the reverse of their order (so that none is always timed first or last):
// RESULTS/retime.json, which the merge reads (class_leaderboard.h).
void retimeTop(const fs::path& results, const GradeSettings& settings, int count) {
  if (count <= 0) return;
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) {
    std::cout << "the top of the ranking is not re-timed: no GPU here (" << gpu.unusableReason << ")\n";
    return;
  }
  const std::string batch = std::to_string(kGradeBatches.back());
  std::vector<std::string> top;
  for (const LeaderboardGroup& g : buildLeaderboard(results, false).groups)
    if (g.gpu == gpu.name)
      for (const json& row : g.rows)
        if (int(top.size()) < count && row["status"] == kGradePassed && row["opTimeSeconds"].contains(batch))
          top.push_back(row["id"]);
  if (top.empty()) return;
  if (settings.memoryLimitMb) ::setenv("CONVSCOPE_MEMORY_LIMIT_MB", std::to_string(*settings.memoryLimitMb).c_str(), 1);
  std::cout << "re-timing the top " << top.size() << " on " << gpu.name << " to confirm their order\n" << std::flush;
  json entries = json::array();
  for (auto id = top.rbegin(); id != top.rend() && !g_interrupted; ++id) {
    const SubmissionSource source = submissionSource(results, *id);
    const fs::path resultPath = resultFile(results, *id);
    const json graded = parseJsonText(readWholeFile(resultPath), resultPath.string());
    const std::string studentFile = graded.value("file", source.file.filename().string());
    // Read once (never through a symbolic link) and compiled once, as when it was graded.
    std::shared_ptr<const SubmittedKernel> kernel;
    std::string notRetimed = source.problem;
    if (notRetimed.empty()) {
      try {
        kernel = submitKernel(source.file, studentFile, compileOptions(settings), [] { return !g_interrupted.load(); });
        if (kernel->contentHash != graded.value("contentHash", "")) notRetimed = "its file changed since it was graded";
      } catch (const Error& e) {
        notRetimed = e.what();
      }
    }
    if (!notRetimed.empty()) {
      std::cout << *id << "  not re-timed: " << notRetimed << "\n";
      continue;
    }
    json entry = {{"id", *id}, {"contentHash", graded["contentHash"]}};
    FairTimingOutcome timing;
    if (kernel->ok())
      timing = timeFairly(gradingJob(kernel, settings, freshGradingSeed()));
    else
      timing.result.failure = kernel->compiled.errorText();
    std::string failure = timing.result.passed ? timing.belowFloor : timing.result.failure;
    if (timing.result.passed && !timing.belowFloor.empty()) failure += " (below the physical floor)";
    if (timing.result.passed && !timing.sums.count(kGradeBatches.back())) failure = "no time at batch " + batch;
    if (failure.empty()) {
      entry["seconds"] = timing.sums.at(kGradeBatches.back());
      std::cout << *id << "  re-timed: " << entry["seconds"].get<double>() * 1e3 << " ms (first "
                << graded["opTimeSeconds"][batch].get<double>() * 1e3 << " ms)\n"
                << std::flush;
    } else {
      for (size_t at = failure.find(source.file.string()); at != std::string::npos;
           at = failure.find(source.file.string(), at))
        failure.replace(at, source.file.string().size(), studentFile);
      entry["failure"] = failure;
      std::cout << *id << "  re-timing failed: " << failure << "\n" << std::flush;
    }
    entries.push_back(entry);
  }
  if (g_interrupted) return;
  writeFileAtomically(results / kRetimeFileName, json({{"schema", kClassResultsSchema},
                                                       {"gpu", gpu.name},
                                                       {"batch", kGradeBatches.back()},
                                                       {"retimedAt", nowIso()},
                                                       {"submissions", entries}})
                                                         .dump(2) +
                                                     "\n");
}

void writeSkipped(const fs::path& results, const Discovery& found) {
  writeFileAtomically(results / "skipped.json",
                      json({{"schema", kClassResultsSchema}, {"skipped", found.skipped}}).dump(2) + "\n");
  for (const json& s : found.skipped)
    std::cout << "skipped " << s["path"].get<std::string>() << ": " << s["reason"].get<std::string>() << "\n";
}

std::string seconds(double s) {
  std::ostringstream text;
  text.precision(1);
  text << std::fixed << s << " s";
  return text.str();
}

// Grades every changed submission, `jobs` children at once; Ctrl+C stops the children and keeps
// (and merges) what is finished.
int gradeLocally(const fs::path& dir, const fs::path& results, const Discovery& found, const GradeSettings& settings,
                 int jobs, int retimeCount, bool anonymize) {
  const json current = settingsJson(settings);
  std::vector<Submission> pending;
  for (const Submission& s : found.submissions) {
    if (const auto kept = keptResult(results, s, current)) {
      std::cout << s.id << "  " << kept->value("status", "") << "  unchanged, kept (graded "
                << kept->value("gradedAt", "") << ")\n";
      continue;
    }
    pending.push_back(s);
  }
  if (!pending.empty()) {
    removeOldGradingRunRecord(results);
    if (!referencesCurrent(results, settings)) timeReferences(results, settings);
  }
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigaction(SIGINT, &action, nullptr);
  const int gpuSlots = gpuInfo().usable ? std::max<int>(1, int(visibleGpus().size())) : 0;
  std::atomic<size_t> next{0};
  std::mutex printing;
  bool sandboxWarned = false;  // said once per grading run, not once per submission
  const auto worker = [&] {
    for (size_t i = next++; i < pending.size() && !g_interrupted; i = next++) {
      const Submission& s = pending[i];
      std::vector<std::string> argv = {thisProgram(), "grade",          dir.string(),
                                       "--out",       results.string(), "--only",
                                       s.id,          "--gpu-slots",    std::to_string(gpuSlots)};
      for (const std::string& o : settingsOptions(settings)) argv.push_back(o);
      // Compile, check (and network) and timing, each within the limit, and a margin for the
      // grader; a child may also wait for the GPU locks while the others' steps run (GpuLocks).
      // This limit only catches a grader that hangs (the kernel's own steps have theirs).
      const int waitingAhead = gpuSlots > 0 ? jobs : 0;
      const double limit = (3.0 * settings.timeLimitSeconds + 120.0) * (1 + waitingAhead);
      const ChildOutcome child = runChildProcess(argv, limit, [] { return !g_interrupted.load(); });
      const std::lock_guard<std::mutex> lock(printing);
      if (child.cancelled) {
        std::cout << s.id << "  stopped (Ctrl+C), not graded\n" << std::flush;
        continue;
      }
      std::string status;
      if (!child.succeeded()) {
        // The grader's own child did not finish: the submission still gets a status.
        json r = {{"schema", kClassResultsSchema},
                  {"kind", kSubmissionKind},
                  {"id", s.id},
                  {"file", s.relative},
                  {"path", fs::absolute(s.file).lexically_normal().string()},
                  {"contentHash", submissionHash(s).value_or("")},
                  {"settings", current},
                  {"gpu", gpuJson()},
                  {"status", child.timedOut ? kGradeTimeLimit : kGradeFaulted},
                  {"message", "grading this submission " + child.describe(limit)},
                  {"gradedAt", nowIso()},
                  {"accuracy", nullptr},
                  {"opTimeSeconds", json::object()},
                  {"registers", nullptr},
                  {"occupancy", nullptr}};
        fs::create_directories(results / "submissions");
        writeFileAtomically(resultFile(results, s.id), r.dump(2) + "\n");
        status = r["status"];
        // For the course staff: what the grader said before it ended (not in the student's message).
        std::cerr << s.id << ": the grading process " << child.describe(limit) << "; its output:\n"
                  << child.output << "\n";
      } else {
        const json r = parseJsonText(readWholeFile(resultFile(results, s.id)), s.id);
        status = r["status"];
        const json sandbox = r.value("sandbox", json());
        if (!sandboxWarned && sandbox.is_object() && !sandbox.value("enforced", true)) {
          std::cout << sandboxWarning(sandbox.value("description", std::string())) << "\n";
          sandboxWarned = true;
        }
      }
      std::cout << s.id << "  " << status << "  " << seconds(child.seconds) << "\n" << std::flush;
    }
  };
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs; ++j) workers.emplace_back(worker);
  for (std::thread& t : workers) t.join();
  if (g_interrupted)
    std::cout << "interrupted: the finished results are kept and merged\n";
  else if (!pending.empty())
    retimeTop(results, settings, retimeCount);
  merge(results, anonymize);
  return g_interrupted ? 130 : 0;
}

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string commandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    line += shellQuote(a);
  }
  return line;
}

fs::path findProgram(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "/usr/bin:/bin");
  for (std::string folder; std::getline(folders, folder, ':');)
    if (!folder.empty() && ::access((fs::path(folder) / name).c_str(), X_OK) == 0) return fs::path(folder) / name;
  throw Error(name + ": not found on PATH (is Slurm installed here? docs/class-mode.md)");
}

// Runs a Slurm command and returns its output; throws with the command and its output on failure.
std::string slurmCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> full = argv;
  full[0] = findProgram(argv[0]).string();
  const ChildOutcome outcome = runChildProcess(full, 120.0);
  if (!outcome.succeeded())
    throw Error(argv[0] + " " + outcome.describe(120.0) + ": " + outcome.output + " (" + commandLine(argv) + ")");
  return outcome.output;
}

// sbatch --parsable prints "JOBID" or "JOBID;CLUSTER".
std::string submittedJobId(const std::string& output) {
  static const std::regex line(R"((^|\n)(\d+)(;\S+)?\s*($|\n))");
  std::smatch m;
  if (!std::regex_search(output, m, line)) throw Error("sbatch printed no job id: " + output);
  return m[2].str();
}

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

// Why the --time of a task is what it is: a task compiles (a time limit), checks, runs the test
// set and times (a time limit each), and the three dominate; two minutes more for the CUDA
// context, the model and the data; in minutes, rounded up. The merge job adds half an hour for
// the course's reference timings and the re-timing of the top.
int taskMinutesFor(const GradeSettings& settings) {
  return (3 * settings.timeLimitSeconds + 120) / 60 + 1;
}

std::string sbatchHeader(const SlurmOptions& o, const std::string& name, const std::string& output, int minutes) {
  std::string header = "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --output=" + output +
                       "\n#SBATCH --time=" + std::to_string(minutes) + "\n";
  if (o.partition) header += "#SBATCH --partition=" + *o.partition + "\n";
  if (o.gres) header += "#SBATCH --gres=" + *o.gres + "\n";
  for (const std::string& arg : o.sbatchArgs) header += "#SBATCH " + arg + "\n";
  return header;
}

std::string prologLines(const SlurmOptions& o) {
  std::string lines;
  for (const std::string& line : o.prolog) lines += line + "\n";
  return lines;
}

// A line of a job script from the command line: one line; for --sbatch-arg an sbatch option's
// long name and value (account=course42 becomes #SBATCH --account=course42).
std::string scriptLine(const std::string& option, const std::string& value, bool sbatchOption) {
  if (value.find_first_of("\n\r") != std::string::npos)
    throw Error("grade: " + option + " '" + value + "': one line, please (a line break would end the script's line)");
  if (!sbatchOption) return value;
  const std::string name = value.substr(0, value.find('='));
  const bool isName = !name.empty() && std::islower(static_cast<unsigned char>(name[0])) &&
                      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string::npos;
  if (!isName)
    throw Error("grade: " + option + " '" + value +
                "': an sbatch option's long name and value without the dashes, such as account=course42");
  // sbatch splits an #SBATCH line at blanks: a value with one would become other options.
  if (value.find_first_of(" \t") != std::string::npos)
    throw Error("grade: " + option + " '" + value +
                "': no blanks in an sbatch option (give each as its own NAME=VALUE)");
  return "--" + value;
}

// Which tasks failed (a manifest line without a result), each with its array index, its log and
// the commands that grade it again here and merge; the logs' folder when none can be told.
std::string failedTasksMessage(const fs::path& dir, const fs::path& results, const std::vector<std::string>& ids,
                               const std::string& arrayId, const std::string& mergeId, const GradeSettings& settings,
                               fs::file_time_type submittedAt) {
  std::string message = "a grading task of array job " + arrayId + " failed, so merge job " + mergeId +
                        " can never run (it was cancelled).";
  std::string options;
  for (const std::string& option : settingsOptions(settings)) options += " " + shellQuote(option);
  int named = 0;
  for (size_t index = 0; index < ids.size(); ++index) {
    const fs::path file = resultFile(results, ids[index]);
    std::error_code error;
    if (fs::exists(file) && fs::last_write_time(file, error) >= submittedAt && !error) continue;  // graded now
    message += "\n  task " + std::to_string(index) + ": " + ids[index] + ", log " +
               (results / "slurm" / "logs" / ("grade_" + arrayId + "_" + std::to_string(index) + ".out")).string() +
               "; grade it again here: " +
               commandLine({thisProgram(), "grade", fs::absolute(dir).string(), "--out", results.string(), "--only",
                            ids[index]}) +
               options;
    ++named;
  }
  if (named == 0) message += " The tasks' logs: " + (results / "slurm" / "logs").string();
  return message + "\nthen: " + commandLine({thisProgram(), "grade", "merge", results.string()});
}

int gradeOnSlurm(const fs::path& dir, const fs::path& results, const Discovery& found, const GradeSettings& settings,
                 const SlurmOptions& o, bool anonymize) {
  if (found.submissions.empty()) throw Error(dir.string() + ": no submissions to grade (no .cu files)");
  const fs::path slurm = results / "slurm";
  // Only what is new or changed since its last grading goes to the cluster (after a deadline's
  // extension, a few files, not the class).
  std::vector<std::string> ids;
  const json current = settingsJson(settings);
  for (const Submission& s : found.submissions)
    if (!keptResult(results, s, current)) ids.push_back(s.id);
  std::string manifest;
  for (const std::string& id : ids) manifest += id + "\n";
  const int taskMinutes = taskMinutesFor(settings);
  const std::string program = thisProgram();
  std::vector<std::string> task = {program, "grade", fs::absolute(dir).string(), "--out", results.string(), "--only"};
  std::string gradeLine = commandLine(task) + " \"$id\"";
  for (const std::string& option : settingsOptions(settings)) {
    gradeLine += ' ';
    gradeLine += shellQuote(option);
  }
  const std::string arrayScript =
      sbatchHeader(o, "convscope-grade", (slurm / "logs" / "grade_%A_%a.out").string(), taskMinutes) +
      "#SBATCH --array=0-" + std::to_string(std::max<size_t>(ids.size(), 1) - 1) + "%" + std::to_string(o.maxParallel) +
      "\n# One task per new or changed submission: the task's index is its line (from 0) in the manifest.\n"
      "# Each task draws its own seed when its grading starts: no seed is written here.\nset -euo pipefail\n" +
      prologLines(o) + "id=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " +
      shellQuote((slurm / "manifest.txt").string()) + ")\n" + "exec " + gradeLine + "\n";
  std::vector<std::string> mergeArgv = {
      program, "grade", "merge", results.string(), "--time-references", "--retime-top", std::to_string(o.retimeCount)};
  mergeArgv.push_back(anonymize ? "--anonymize" : "--no-anonymize");
  // A GPU was asked for: a class where no task got one is the grader's failure, not a result.
  if (o.gres) mergeArgv.push_back("--expect-gpu");
  for (const std::string& option : settingsOptions(settings)) mergeArgv.push_back(option);
  const auto mergeScript = [&](const std::string& dependency) {
    return sbatchHeader(o, "convscope-grade-merge", (slurm / "logs" / "merge_%j.out").string(), taskMinutes + 30) +
           (dependency.empty() ? "" : "#SBATCH --dependency=afterok:" + dependency + "\n") + "set -euo pipefail\n" +
           prologLines(o) + "exec " + commandLine(mergeArgv) + "\n";
  };
  if (o.dryRun) {
    // Printed only: no file written, no seed drawn, nothing of an earlier run touched.
    std::cout << "# " << (slurm / "manifest.txt").string() << " (not written: --dry-run; " << ids.size() << " of "
              << found.submissions.size() << " submissions new or changed)\n"
              << manifest;
    if (!ids.empty())
      std::cout << "\n# " << (slurm / "grade-array.sbatch").string() << " (not submitted: --dry-run)\n" << arrayScript;
    std::cout << "\n# " << (slurm / "grade-merge.sbatch").string() << " (not submitted: --dry-run"
              << (ids.empty() ? "" : "; ARRAY_JOB_ID is the array's job id once submitted") << ")\n"
              << mergeScript(ids.empty() ? "" : "ARRAY_JOB_ID");
    return 0;
  }
  fs::create_directories(slurm / "logs");
  removeOldGradingRunRecord(results);
  writeFileAtomically(slurm / "manifest.txt", manifest);
  if (ids.empty()) {
    std::cout << "all " << found.submissions.size()
              << " submissions are unchanged since their grading: no task to submit; merging here\n";
    return merge(results, anonymize);
  }
  writeFileAtomically(slurm / "grade-array.sbatch", arrayScript);
  const fs::file_time_type submittedAt = fs::file_time_type::clock::now();
  const std::string arrayId =
      submittedJobId(slurmCommand({"sbatch", "--parsable", (slurm / "grade-array.sbatch").string()}));
  writeFileAtomically(slurm / "grade-merge.sbatch", mergeScript(arrayId));
  const std::string mergeId =
      submittedJobId(slurmCommand({"sbatch", "--parsable", (slurm / "grade-merge.sbatch").string()}));
  std::cout << "submitted array job " << arrayId << " (" << ids.size() << " tasks, at most " << o.maxParallel
            << " at once) and merge job " << mergeId << " (afterok:" << arrayId << ")\n"
            << std::flush;
  if (!o.wait) return 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.waitTimeoutSeconds);
  std::chrono::seconds pause(1);
  while (true) {
    const ChildOutcome queued =
        runChildProcess({findProgram("squeue").string(), "-h", "-j", mergeId, "-o", "%T %r"}, 60);
    const std::string state = queued.succeeded() ? queued.output : "";
    if (state.find("DependencyNeverSatisfied") != std::string::npos) {
      runChildProcess({findProgram("scancel").string(), mergeId}, 60);
      throw Error(failedTasksMessage(dir, results, ids, arrayId, mergeId, settings, submittedAt));
    }
    if (state.find_first_not_of(" \n") == std::string::npos) break;  // left the queue
    if (std::chrono::steady_clock::now() > deadline)
      throw Error("merge job " + mergeId + " still not done after " + std::to_string(o.waitTimeoutSeconds) +
                  " s; the jobs go on (squeue -j " + arrayId + "," + mergeId + ")");
    // Gently: a second at first, then up to 30 s between looks (a cluster's controller serves many).
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::seconds(30));
  }
  const std::string shown = slurmCommand({"scontrol", "show", "job", mergeId});
  if (shown.find("JobState=COMPLETED") == std::string::npos) {
    std::smatch m;
    std::regex_search(shown, m, std::regex(R"(JobState=\S+)"));
    throw Error("merge job " + mergeId + " ended " + m.str() + "; its log: " + (slurm / "logs").string());
  }
  const json board =
      parseJsonText(readWholeFile(results / "leaderboard.json"), (results / "leaderboard.json").string());
  for (const json& g : board["groups"]) std::cout << g["summary"].get<std::string>() << "\n";
  std::cout << "leaderboard: " << (results / "leaderboard.html").string() << "\n";
  return 0;
}

// `grade export RESULTS --out FOLDER`: one small file per student, to upload or mail: what they
// got (status, message, figures), where they stand (rank of how many, on which GPU), how to
// repeat their check (the seed), and their pseudonym when the board is anonymized. ID.txt to
// read, ID.json for a course site; both the owner's alone until sent.
int exportForStudents(const fs::path& results, const fs::path& out) {
  const bool anonymized = publishAnonymized(results, std::nullopt);
  const Leaderboard board = buildLeaderboard(results, false);
  std::map<std::string, std::string> pseudonymOf;
  if (anonymized) {
    buildLeaderboard(results, true);  // makes the pseudonyms of every id, as the board shows them
    std::istringstream mapping(readWholeFile(results / "pseudonyms.csv"));
    std::string line;
    std::getline(mapping, line);
    while (std::getline(mapping, line))
      if (const size_t comma = line.find(','); comma != std::string::npos)
        pseudonymOf[line.substr(0, comma)] = line.substr(comma + 1);
  }
  fs::create_directories(out);
  fs::permissions(out, fs::perms::owner_all, fs::perm_options::replace);
  int written = 0;
  for (const LeaderboardGroup& g : board.groups)
    for (const json& row : g.rows) {
      const std::string id = row["id"];
      const json result = parseJsonText(readWholeFile(resultFile(results, id)), resultFile(results, id).string());
      const std::string file = result.value("file", id + ".cu");
      const std::string seed = result.value("seed", std::string());
      json student = {{"schema", kClassResultsSchema},
                      {"kind", "convscope-class-student-result"},
                      {"id", id},
                      {"pseudonym", anonymized ? json(pseudonymOf[id]) : json(nullptr)},
                      {"file", file},
                      {"status", row["status"]},
                      {"message", row["message"]},
                      {"rank", row["rank"]},
                      {"of", g.rows.size()},
                      {"gpu", g.gpu.empty() ? json(nullptr) : json(g.gpu)},
                      {"accuracy", row["accuracy"]},
                      {"opTimeSeconds", row["opTimeSeconds"]},
                      {"speedupOverCudnn", row["speedupOverCudnn"]},
                      {"registers", row["registers"]},
                      {"occupancy", row["occupancy"]},
                      {"seed", seed.empty() ? json(nullptr) : json(seed)},
                      {"gradedAt", row["gradedAt"]}};
      std::ostringstream text;
      text << (board.title.empty() ? "ConvScope grading" : board.title) << ": " << id << "\n\n"
           << "File:    " << file << "\n"
           << "Status:  " << row["status"].get<std::string>() << "\n"
           << "Rank:    " << row["rank"].get<int>() << " of " << g.rows.size()
           << (g.gpu.empty() ? " (graded without a GPU)" : " on " + g.gpu) << "\n";
      if (anonymized) text << "Your pseudonym on the published leaderboard: " << pseudonymOf[id] << "\n";
      if (row["accuracy"].is_number()) text << "Accuracy: " << row["accuracy"].get<double>() << "\n";
      for (const auto& [batch, time] : row["opTimeSeconds"].items())
        if (time.is_number()) text << "Op time at batch " << batch << ": " << time.get<double>() * 1e3 << " ms\n";
      text << "\n" << row["message"].get<std::string>() << "\n";
      if (!seed.empty())
        text << "\nTo repeat your check with the same shapes: convscope-cli kernel check " << file << " --seed " << seed
             << "\n";
      writeFileAtomically(out / (id + ".txt"), text.str(), 0600);
      writeFileAtomically(out / (id + ".json"), student.dump(2) + "\n", 0600);
      ++written;
    }
  std::cout << "exported " << written << " students' results to " << out.string() << " (ID.txt and ID.json each)\n";
  return 0;
}

}  // namespace

int runGrade(const std::vector<std::string>& tokens) {
  if (tokens.empty() || tokens[0] == "--help" || tokens[0] == "-h") {
    std::cout << kHelp;
    return tokens.empty() ? 2 : 0;
  }
  if (tokens[0] == "export") {
    if (tokens.size() < 2 || tokens[1].rfind("--", 0) == 0)
      throw Error("grade export: which results folder? (grade export RESULTS --out FOLDER)");
    const fs::path results = tokens[1];
    if (!fs::is_directory(results / "submissions")) throw Error(results.string() + ": not a results folder");
    const Args args({tokens.begin() + 2, tokens.end()}, {"out"}, {});
    const std::optional<std::string> out = args.value("out");
    if (!out) throw Error("grade export: where do the students' files go? (--out FOLDER)");
    return exportForStudents(results, *out);
  }
  if (tokens[0] == "merge") {
    if (tokens.size() < 2 || tokens[1].rfind("--", 0) == 0)
      throw Error("grade merge: which results folder? (grade merge RESULTS)");
    const fs::path results = tokens[1];
    if (!fs::is_directory(results)) throw Error(results.string() + ": not a results folder");
    const Args args({tokens.begin() + 2, tokens.end()},
                    {"model", "data", "time-limit", "memory-limit", "retime-top", "title"},
                    {"anonymize", "no-anonymize", "time-references", "expect-gpu"});
    const bool anonymize = publishAnonymized(results, anonymizeAsked(args));
    if (const auto title = args.value("title")) recordLeaderboardTitle(results, *title);
    if (args.has("time-references")) timeReferences(results, readSettings(args));
    retimeTop(results, readSettings(args), args.intValue("retime-top", 0, 0));
    return merge(results, anonymize, args.has("expect-gpu"));
  }
  const fs::path dir = tokens[0];
  const Args args({tokens.begin() + 1, tokens.end()},
                  {"out", "jobs", "only", "time-limit", "memory-limit", "model", "data", "partition", "gres",
                   "max-parallel", "wait-timeout", "gpu-slots", "retime-top", "sbatch-arg", "prolog", "title"},
                  {"anonymize", "no-anonymize", "slurm", "wait", "dry-run"});
  const std::optional<std::string> out = args.value("out");
  if (!out) throw Error("grade: where do the results go? (--out RESULTS)");
  const fs::path results = fs::absolute(*out);
  // A dry run writes nothing, not even the results folder.
  const bool dryRun = args.has("slurm") && args.has("dry-run");
  if (!dryRun) fs::create_directories(results / "submissions");
  const std::optional<bool> anonymizeAskedHere = anonymizeAsked(args);
  const GradeSettings settings = readSettings(args);
  if (!fs::exists(settings.model)) throw Error(settings.model.string() + ": no such model file");
  const Discovery found = discoverSubmissions(dir);
  if (const auto only = args.value("only")) {
    const auto it = std::find_if(found.submissions.begin(), found.submissions.end(),
                                 [&](const Submission& s) { return s.id == *only; });
    if (it == found.submissions.end()) {
      for (const json& skipped : found.skipped) {  // a link, a FIFO...: why it is not graded
        const std::string path = skipped["path"];
        if (path == *only || path == *only + ".cu" || path.rfind(*only + "/", 0) == 0)
          throw Error(dir.string() + ": '" + *only + "' is not graded: " + path + ": " +
                      skipped["reason"].get<std::string>());
      }
      throw Error(dir.string() + ": no submission '" + *only + "' in it");
    }
    if (const auto kept = keptResult(results, *it, settingsJson(settings))) {
      std::cout << it->id << "  " << kept->value("status", "") << "  unchanged, kept\n";
      return 0;
    }
    const json r = gradeSubmission(results, *it, settings, args.intValue("gpu-slots", 0, 0));
    std::cout << it->id << "  " << r["status"].get<std::string>() << "  " << seconds(r["gradingSeconds"]) << "\n";
    return 0;
  }
  if (!dryRun) writeSkipped(results, found);
  if (const auto title = args.value("title"); title && !dryRun) recordLeaderboardTitle(results, *title);
  if (args.has("slurm")) {
    SlurmOptions o;
    o.partition = args.value("partition");
    if (const auto gres = args.value("gres")) {
      if (*gres == "none")
        o.gres.reset();
      else
        o.gres = gres;
    }
    for (const std::string& arg : args.values("sbatch-arg"))
      o.sbatchArgs.push_back(scriptLine("--sbatch-arg", arg, true));
    for (const std::string& line : args.values("prolog")) o.prolog.push_back(scriptLine("--prolog", line, false));
    o.maxParallel = args.intValue("max-parallel", 8, 1);
    o.wait = args.has("wait");
    o.dryRun = args.has("dry-run");
    o.waitTimeoutSeconds = args.intValue("wait-timeout", 3600, 1);
    o.retimeCount = args.intValue("retime-top", kDefaultRetimeCount, 0);
    return gradeOnSlurm(dir, results, found, settings, o,
                        o.dryRun ? anonymizeAskedHere.value_or(false) : publishAnonymized(results, anonymizeAskedHere));
  }
  return gradeLocally(dir, results, found, settings, args.intValue("jobs", 1, 1),
                      args.intValue("retime-top", kDefaultRetimeCount, 0),
                      publishAnonymized(results, anonymizeAskedHere));
}

}  // namespace convscope::cli
