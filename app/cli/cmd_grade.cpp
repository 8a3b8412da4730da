// convscope-cli grade: a whole class's kernels compiled, checked, run on the test set, timed and
// ranked (docs/class-mode.md). Every submission is graded by this same program in a child process
// ('grade DIR --out RESULTS --only ID'), which runs the kernel itself in a further child
// (UserKernelJob): N of them at once locally, or one Slurm array task each on a cluster. The merge
// (class_leaderboard.h) reads only the per-submission JSON files, wherever they were written.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

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
#include "app/core/engine/user_kernel_job.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/child_process.h"
#include "app/core/util/error.h"
#include "app/core/util/json_file.h"
#include "gpu/fair_timing_harness.h"
#include "gpu/user_kernel.h"
#include "gpu/user_kernel_inspect.h"

namespace convscope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kHelp = R"(usage: convscope-cli grade DIR --out RESULTS [--jobs N] [--only ID] [--anonymize]
                           [--time-limit SECONDS] [--memory-limit MB] [--model FILE.onnx] [--data DIR]
       convscope-cli grade DIR --out RESULTS --slurm [--partition P] [--gres gpu:1] [--max-parallel K]
                           [--wait] [--wait-timeout SECONDS] [--dry-run] [options above]
       convscope-cli grade merge RESULTS [--anonymize] [--time-references] [--retime-top K]
                           [--model FILE.onnx] [--data DIR]

A class's kernels graded and ranked (docs/class-mode.md). Each submission in DIR is a FILE.cu or
a folder holding exactly one .cu; its name is the student's id. Anything else is reported and
skipped. Each is compiled, checked on 12 random shapes (a seed fresh for each grading run, from
the system's secure random source), run on the 10,000 test images and timed at batches 100,
1,000 and 10,000, each step in a child process with a time limit. Results: RESULTS/submissions/
ID.json, merged into RESULTS/leaderboard.json, .csv and .html (correct first, then the conv
op-time sum at 10,000; one table per GPU). A submission whose file and settings did not change
since its last grading is kept, not graded again.
  --jobs N            grade N submissions at once (compiling is CPU work; the GPU steps take one
                      GPU each, one submission per GPU at a time)
  --only ID           grade this submission alone (what each Slurm array task runs)
  --anonymize         the published leaderboard shows stable pseudonyms, not ids; the mapping
                      stays in RESULTS/pseudonyms.csv
  --retime-top K      once the class is graded, time the K fastest correct submissions again, in
                      the reverse order, to confirm their order (default 5, 0: none); they are
                      the leaderboard says whether the order held
  --time-limit S      each child's time limit (default 120 s)
  --memory-limit MB   the host memory one inference of a submission may take (default: half of this
                      machine's); its process is stopped past that and 2,000 MB for the CUDA
                      libraries and the compiler (status 'memory limit')
  --slurm             write an sbatch array script (one task per submission) and a merge job that
                      depends on it (afterok), and submit both; --dry-run prints them instead
  --max-parallel K    the array's throttle (%K, default 8)
  --wait              wait for the merge job (squeue, scontrol) and print the summary
  merge RESULTS       merge the submissions' JSON into the leaderboard (also by hand);
                      --time-references also times the course's variants on the GPU here,
                      --retime-top K re-times the top K here first (what the Slurm merge job does)
Exit code: 0 when every submission got a status (whatever it is), 1 on an error of the grader.
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
  fs::path file;         // the .cu
  std::string relative;  // its path under DIR, for messages
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
// letters, digits, '.', '_' and '-', not starting with '.'.
bool isSafeId(const std::string& id) {
  static const std::regex safe(R"([A-Za-z0-9_-][A-Za-z0-9._-]*)");
  return std::regex_match(id, safe);
}

Discovery discoverSubmissions(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": not a folder of submissions");
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  Discovery found;
  std::set<std::string> ids;
  for (const fs::path& path : entries) {
    const std::string name = path.filename().string();
    const auto skip = [&](const std::string& reason) { found.skipped.push_back({{"path", name}, {"reason", reason}}); };
    Submission s;
    if (fs::is_regular_file(path) && path.extension() == ".cu") {
      s = {path.stem().string(), path, name};
    } else if (fs::is_directory(path)) {
      std::vector<fs::path> kernels;
      for (const auto& inner : fs::directory_iterator(path))
        if (inner.is_regular_file() && inner.path().extension() == ".cu") kernels.push_back(inner.path());
      if (kernels.size() != 1) {
        skip("a submission folder must hold exactly one .cu file; this one holds " + std::to_string(kernels.size()));
        continue;
      }
      s = {name, kernels[0], name + "/" + kernels[0].filename().string()};
    } else {
      skip("not a .cu file or a folder holding one");
      continue;
    }
    if (!isSafeId(s.id)) {
      skip("the id '" + s.id + "' may hold only letters, digits, '.', '_' and '-'");
      continue;
    }
    if (!ids.insert(s.id).second) {
      skip("the id '" + s.id + "' is already taken by another entry");
      continue;
    }
    found.submissions.push_back(s);
  }
  return found;
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

std::string contentHash(const fs::path& file) {
  return hex64(sipHash24(readWholeFile(file), 0, 0));
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
    if (kept.value("schema", 0) == kClassResultsSchema && kept.value("contentHash", "") == contentHash(s.file) &&
        kept.value("settings", json()) == settings)
      return kept;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The grading run's seed: fresh for each run started by the parent (or by --only alone), shared
// by every task of that run through RESULTS/grading-run.json.
uint64_t startGradingRun(const fs::path& results) {
  uint64_t seed = 0;
  while (seed == 0) seed = secureRandom64();
  writeFileAtomically(
      results / "grading-run.json",
      json({{"schema", kClassResultsSchema}, {"seed", std::to_string(seed)}, {"startedAt", nowIso()}}).dump(2) + "\n");
  return seed;
}

uint64_t gradingRunSeed(const fs::path& results) {
  const fs::path file = results / "grading-run.json";
  if (!fs::exists(file)) return startGradingRun(results);
  const json run = parseJsonText(readWholeFile(file), file.string());
  uint64_t seed = 0;
  try {
    seed = std::stoull(run.value("seed", std::string()));
  } catch (const std::exception&) {
    seed = 0;
  }
  if (seed == 0) throw Error(file.string() + ": no seed in it (delete it to start a new grading run)");
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

// A local run's GPU steps take one GPU each: a lock file per GPU under RESULTS, held while the
// kernel runs (timings never share a GPU); the kernel's child sees only that GPU.
class GpuSlot {
 public:
  GpuSlot(const fs::path& results, int gpuCount) {
    if (gpuCount <= 0) return;
    const std::vector<std::string> gpus = visibleGpus();
    while (!g_interrupted) {
      for (int k = 0; k < gpuCount; ++k) {
        const fs::path lock = results / (".gpu-" + std::to_string(k) + ".lock");
        const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
        if (fd < 0) throw Error(lock.string() + ": cannot open the GPU's lock file");
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
          fd_ = fd;
          if (gpuCount > 1 && k < int(gpus.size())) ::setenv("CUDA_VISIBLE_DEVICES", gpus[k].c_str(), 1);
          return;
        }
        ::close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  ~GpuSlot() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  GpuSlot(const GpuSlot&) = delete;
  GpuSlot& operator=(const GpuSlot&) = delete;

 private:
  int fd_ = -1;
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

// The job that checks and times one submission's kernel in a child process.
UserKernelJob gradingJob(const fs::path& file, const GradeSettings& settings, uint64_t seed) {
  UserKernelJob job;
  job.program = thisProgram();
  job.file = file;
  job.shapes = kCheckShapes;
  job.seed = seed;
  job.network = true;
  job.model = settings.model;
  job.data = settings.data;
  job.timeLimitSeconds = settings.timeLimitSeconds;
  return job;
}

// Grades one submission and writes RESULTS/submissions/ID.json; returns its result.
json gradeSubmission(const fs::path& results, const Submission& s, const GradeSettings& settings, uint64_t seed,
                     int gpuSlots) {
  const auto started = std::chrono::steady_clock::now();
  json r = {{"schema", kClassResultsSchema},
            {"kind", kSubmissionKind},
            {"id", s.id},
            {"file", s.relative},
            // Where the window's Class tab opens it from (`file` is relative to a DIR the results do not record).
            {"path", fs::absolute(s.file).lexically_normal().string()},
            {"contentHash", contentHash(s.file)},
            {"settings", settingsJson(settings)},
            {"seed", std::to_string(seed)},  // a string: JSON readers that hold numbers as doubles lose digits
            {"gpu", gpuJson()},
            {"accuracy", nullptr},
            {"opTimeSeconds", json::object()},
            {"registers", nullptr},
            {"occupancy", nullptr}};
  const auto finish = [&](const std::string& status, const std::string& message) {
    r["status"] = status;
    r["message"] = relativeMessage(message, s);
    r["gradedAt"] = nowIso();
    r["gradingSeconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fs::create_directories(results / "submissions");
    writeFileAtomically(resultFile(results, s.id), r.dump(2) + "\n");
    return r;
  };
  const UserKernelSource source = readUserKernelSource(s.file);
  if (!source.ok()) {
    std::string message;
    for (const KernelDiagnostic& d : source.problems) message += (message.empty() ? "" : "; ") + d.text();
    return finish(kGradeBreaksContract, message);
  }
  // Without a compiler here nothing can be said of the kernel: not the student's fault.
  if (const std::string why = gpu::userKernelCompilerUnavailableReason(); !why.empty())
    return finish(kGradeNoCompiler, "not compiled on this grading machine: " + why);
  // One compile gives the verdict and the figures (registers, occupancy) for the GPU here, or
  // for sm_90 where there is none.
  const gpu::UserKernelInspection inspection = gpu::inspectUserKernel(source, "");
  if (!inspection.kernel.ok()) {
    bool contract = false;
    for (const KernelDiagnostic& e : inspection.kernel.errors)
      contract = contract || e.message.find("breaks the contract") != std::string::npos;
    return finish(contract ? kGradeBreaksContract : kGradeDoesNotCompile, inspection.kernel.errorText());
  }
  if (inspection.resources.found) r["registers"] = inspection.resources.registers;
  if (inspection.occupancy) r["occupancy"] = inspection.occupancy->fraction();
  r["figuresFrom"] = inspection.figuresFrom;
  if (const GpuInfo& gpu = gpuInfo(); !gpu.usable)
    return finish(kGradeNoGpu, "compiled for " + inspection.kernel.architecture +
                                   "; not run: no GPU can run it here (" + gpu.unusableReason + ")");

  if (settings.memoryLimitMb) ::setenv("CONVSCOPE_MEMORY_LIMIT_MB", std::to_string(*settings.memoryLimitMb).c_str(), 1);
  const GpuSlot slot(results, gpuSlots);
  // Which of the machine's GPUs graded it (several GPUs: each child sees only its own).
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) r["gpuDevice"] = visible;
  const UserKernelJob job = gradingJob(s.file, settings, seed);
  const auto ignore = [](const std::string&) {};
  const auto keepGoing = [] { return !g_interrupted.load(); };
  const UserKernelJobResult check = runUserKernelJob(job, ignore, keepGoing);
  r["shapesChecked"] = check.shapesChecked;
  if (check.accuracy) r["accuracy"] = *check.accuracy;
  if (check.courseAccuracy) r["courseAccuracy"] = *check.courseAccuracy;
  if (!check.passed) return finish(statusOfFailure(check), check.failure);
  if (check.accuracy && check.courseAccuracy &&
      std::abs(*check.accuracy - *check.courseAccuracy) * 10000 > kAccuracyToleranceImages + 0.5)
    return finish(kGradeWrong, "the network's accuracy with this kernel, " + std::to_string(*check.accuracy) +
                                   ", differs from the course variants' " + std::to_string(*check.courseAccuracy) +
                                   " by more than " + std::to_string(kAccuracyToleranceImages) + " images");
  const FairTimingOutcome timing = timeFairly(job);
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
    if (v.requirements.gpu && v.unavailableReason().empty() && v.id.rfind("user-", 0) != 0)
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
  const std::optional<DevicePeaks> peaks = devicePeaksFor(gpu.name);
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

int merge(const fs::path& results, bool anonymize) {
  const Leaderboard board = buildLeaderboard(results, anonymize);
  writeLeaderboard(results, board);
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
    if (!source.problem.empty() || contentHash(source.file) != graded.value("contentHash", "")) {
      std::cout << *id << "  not re-timed: "
                << (source.problem.empty() ? "its file changed since it was graded" : source.problem) << "\n";
      continue;
    }
    json entry = {{"id", *id}, {"contentHash", graded["contentHash"]}};
    const FairTimingOutcome timing = timeFairly(gradingJob(source.file, settings, secureRandom64()));
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
        failure.replace(at, source.file.string().size(), graded.value("file", source.file.filename().string()));
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
    startGradingRun(results);
    if (!referencesCurrent(results, settings)) timeReferences(results, settings);
  }
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigaction(SIGINT, &action, nullptr);
  const int gpuSlots = gpuInfo().usable ? std::max<int>(1, int(visibleGpus().size())) : 0;
  std::atomic<size_t> next{0};
  std::mutex printing;
  const auto worker = [&] {
    for (size_t i = next++; i < pending.size() && !g_interrupted; i = next++) {
      const Submission& s = pending[i];
      std::vector<std::string> argv = {thisProgram(), "grade",          dir.string(),
                                       "--out",       results.string(), "--only",
                                       s.id,          "--gpu-slots",    std::to_string(gpuSlots)};
      for (const std::string& o : settingsOptions(settings)) argv.push_back(o);
      // Compile, check, network and bench, each within the limit, and a margin for the grader; a
      // child may first wait for a GPU while the others ahead of it use theirs. This limit only
      // catches a grader that hangs (the kernel's own steps have theirs inside the child).
      const int waitingAhead = gpuSlots > 0 ? (jobs + gpuSlots - 1) / gpuSlots : 0;
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
                  {"contentHash", contentHash(s.file)},
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
        status = parseJsonText(readWholeFile(resultFile(results, s.id)), s.id)["status"];
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
  std::optional<std::string> partition, gres;
  int maxParallel = 8;
  bool wait = false, dryRun = false;
  int waitTimeoutSeconds = 3600;
  int retimeCount = 0;
};

std::string sbatchHeader(const SlurmOptions& o, const std::string& name, const std::string& output, int minutes) {
  std::string header = "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --output=" + output +
                       "\n#SBATCH --time=" + std::to_string(minutes) + "\n";
  if (o.partition) header += "#SBATCH --partition=" + *o.partition + "\n";
  if (o.gres) header += "#SBATCH --gres=" + *o.gres + "\n";
  return header;
}

int gradeOnSlurm(const fs::path& dir, const fs::path& results, const Discovery& found, const GradeSettings& settings,
                 const SlurmOptions& o, bool anonymize) {
  if (found.submissions.empty()) throw Error(dir.string() + ": no submissions to grade (no .cu files)");
  const fs::path slurm = results / "slurm";
  fs::create_directories(slurm / "logs");
  std::string manifest;
  for (const Submission& s : found.submissions) manifest += s.id + "\n";
  writeFileAtomically(slurm / "manifest.txt", manifest);
  startGradingRun(results);
  const std::string program = thisProgram();
  const int taskMinutes = (3 * settings.timeLimitSeconds + 120) / 60 + 1;
  std::vector<std::string> task = {program, "grade", fs::absolute(dir).string(), "--out", results.string(), "--only"};
  std::string gradeLine = commandLine(task) + " \"$id\"";
  for (const std::string& option : settingsOptions(settings)) {
    gradeLine += ' ';
    gradeLine += shellQuote(option);
  }
  const std::string arrayScript =
      sbatchHeader(o, "convscope-grade", (slurm / "logs" / "grade_%A_%a.out").string(), taskMinutes) +
      "#SBATCH --array=0-" + std::to_string(found.submissions.size() - 1) + "%" + std::to_string(o.maxParallel) +
      "\n# One task per submission: the task's index is its line (from 0) in the manifest.\nset -euo pipefail\n" +
      "id=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " + shellQuote((slurm / "manifest.txt").string()) + ")\n" +
      "exec " + gradeLine + "\n";
  std::vector<std::string> mergeArgv = {
      program, "grade", "merge", results.string(), "--time-references", "--retime-top", std::to_string(o.retimeCount)};
  if (anonymize) mergeArgv.push_back("--anonymize");
  for (const std::string& option : settingsOptions(settings)) mergeArgv.push_back(option);
  const auto mergeScript = [&](const std::string& arrayId) {
    return sbatchHeader(o, "convscope-grade-merge", (slurm / "logs" / "merge_%j.out").string(), taskMinutes + 30) +
           "#SBATCH --dependency=afterok:" + arrayId + "\nset -euo pipefail\nexec " + commandLine(mergeArgv) + "\n";
  };
  writeFileAtomically(slurm / "grade-array.sbatch", arrayScript);
  if (o.dryRun) {
    writeFileAtomically(slurm / "grade-merge.sbatch", mergeScript("ARRAY_JOB_ID"));
    std::cout << "# " << (slurm / "grade-array.sbatch").string() << " (not submitted: --dry-run)\n"
              << arrayScript << "\n# " << (slurm / "grade-merge.sbatch").string()
              << " (not submitted: --dry-run; ARRAY_JOB_ID is the array's job id once submitted)\n"
              << mergeScript("ARRAY_JOB_ID");
    return 0;
  }
  const std::string arrayId =
      submittedJobId(slurmCommand({"sbatch", "--parsable", (slurm / "grade-array.sbatch").string()}));
  writeFileAtomically(slurm / "grade-merge.sbatch", mergeScript(arrayId));
  const std::string mergeId =
      submittedJobId(slurmCommand({"sbatch", "--parsable", (slurm / "grade-merge.sbatch").string()}));
  std::cout << "submitted array job " << arrayId << " (" << found.submissions.size() << " tasks, at most "
            << o.maxParallel << " at once) and merge job " << mergeId << " (afterok:" << arrayId << ")\n"
            << std::flush;
  if (!o.wait) return 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.waitTimeoutSeconds);
  while (true) {
    const ChildOutcome queued =
        runChildProcess({findProgram("squeue").string(), "-h", "-j", mergeId, "-o", "%T %r"}, 60);
    const std::string state = queued.succeeded() ? queued.output : "";
    if (state.find("DependencyNeverSatisfied") != std::string::npos) {
      runChildProcess({findProgram("scancel").string(), mergeId}, 60);
      throw Error("a grading task of array job " + arrayId + " failed, so merge job " + mergeId +
                  " can never run; the tasks' logs: " + (slurm / "logs").string());
    }
    if (state.find_first_not_of(" \n") == std::string::npos) break;  // left the queue
    if (std::chrono::steady_clock::now() > deadline)
      throw Error("merge job " + mergeId + " still not done after " + std::to_string(o.waitTimeoutSeconds) +
                  " s; the jobs go on (squeue -j " + arrayId + "," + mergeId + ")");
    std::this_thread::sleep_for(std::chrono::seconds(1));
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

}  // namespace

int runGrade(const std::vector<std::string>& tokens) {
  if (tokens.empty() || tokens[0] == "--help" || tokens[0] == "-h") {
    std::cout << kHelp;
    return tokens.empty() ? 2 : 0;
  }
  if (tokens[0] == "merge") {
    if (tokens.size() < 2 || tokens[1].rfind("--", 0) == 0)
      throw Error("grade merge: which results folder? (grade merge RESULTS)");
    const fs::path results = tokens[1];
    if (!fs::is_directory(results)) throw Error(results.string() + ": not a results folder");
    const Args args({tokens.begin() + 2, tokens.end()}, {"model", "data", "time-limit", "memory-limit", "retime-top"},
                    {"anonymize", "time-references"});
    if (args.has("time-references")) timeReferences(results, readSettings(args));
    retimeTop(results, readSettings(args), args.intValue("retime-top", 0, 0));
    return merge(results, args.has("anonymize"));
  }
  const fs::path dir = tokens[0];
  const Args args({tokens.begin() + 1, tokens.end()},
                  {"out", "jobs", "only", "time-limit", "memory-limit", "model", "data", "partition", "gres",
                   "max-parallel", "wait-timeout", "gpu-slots", "retime-top"},
                  {"anonymize", "slurm", "wait", "dry-run"});
  const std::optional<std::string> out = args.value("out");
  if (!out) throw Error("grade: where do the results go? (--out RESULTS)");
  const fs::path results = fs::absolute(*out);
  fs::create_directories(results / "submissions");
  const GradeSettings settings = readSettings(args);
  if (!fs::exists(settings.model)) throw Error(settings.model.string() + ": no such model file");
  const Discovery found = discoverSubmissions(dir);
  if (const auto only = args.value("only")) {
    const auto it = std::find_if(found.submissions.begin(), found.submissions.end(),
                                 [&](const Submission& s) { return s.id == *only; });
    if (it == found.submissions.end()) throw Error(dir.string() + ": no submission '" + *only + "' in it");
    if (const auto kept = keptResult(results, *it, settingsJson(settings))) {
      std::cout << it->id << "  " << kept->value("status", "") << "  unchanged, kept\n";
      return 0;
    }
    const json r = gradeSubmission(results, *it, settings, gradingRunSeed(results), args.intValue("gpu-slots", 0, 0));
    std::cout << it->id << "  " << r["status"].get<std::string>() << "  " << seconds(r["gradingSeconds"]) << "\n";
    return 0;
  }
  writeSkipped(results, found);
  if (args.has("slurm")) {
    SlurmOptions o;
    o.partition = args.value("partition");
    o.gres = args.value("gres");
    o.maxParallel = args.intValue("max-parallel", 8, 1);
    o.wait = args.has("wait");
    o.dryRun = args.has("dry-run");
    o.waitTimeoutSeconds = args.intValue("wait-timeout", 3600, 1);
    o.retimeCount = args.intValue("retime-top", kDefaultRetimeCount, 0);
    return gradeOnSlurm(dir, results, found, settings, o, args.has("anonymize"));
  }
  return gradeLocally(dir, results, found, settings, args.intValue("jobs", 1, 1),
                      args.intValue("retime-top", kDefaultRetimeCount, 0), args.has("anonymize"));
}

}  // namespace convscope::cli
