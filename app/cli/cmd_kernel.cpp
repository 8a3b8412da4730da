// convscope-cli kernel: a student's kernel file (docs/your-kernel.md) compiled, checked and, with
// bench --kernel, timed. The kernel runs only in a child process ('kernel run-isolated', this same
// program) with a time limit, so that a fault or an endless loop ends that process and the
// message says what happened.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/conv_check.h"
#include "app/core/conv/kernel_history.h"
#include "app/core/conv/kernel_resources.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/conv_pixel.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/fair_timing.h"
#include "app/core/engine/network_predictions.h"
#include "app/core/engine/submitted_kernel.h"
#include "app/core/engine/user_kernel_job.h"
#include "app/core/engine/user_kernel_task.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/data_dir.h"
#include "app/core/util/error.h"
#include "app/core/util/line_diff.h"
#include "gpu/fair_timing_harness.h"
#include "gpu/user_kernel.h"
#include "gpu/user_kernel_inspect.h"

namespace convscope::cli {
namespace {

using nlohmann::json;

constexpr const char* kHelp = R"(usage: convscope-cli kernel check FILE.cu [--shapes N] [--seed S] [--timeout SECONDS]
                                       [--model FILE.onnx] [--data DIR] [--no-network] [--json FILE|-]
                                       [--no-history]
       convscope-cli kernel time FILE.cu [--batches B...] [--repeats N] [--warmups N] [--samples K]
                                      [--seed S] [--timeout SECONDS] [--model FILE.onnx] [--data DIR]
                                      [--json FILE|-] [--no-history]
       convscope-cli kernel info FILE.cu [--arch sm_XY]
       convscope-cli kernel ptx FILE.cu [--arch sm_XY] [--line N]
       convscope-cli kernel sass FILE.cu [--arch sm_XY] [--line N]
       convscope-cli kernel history FILE.cu [--diff A B [--sass]]

Your own convolution kernel (the contract: docs/your-kernel.md; templates: examples/kernels/).
  check   compiles FILE.cu with NVRTC (errors as file:line), then, in a child process with a time
          limit, checks it against a double-precision reference on N fresh random shapes (default
          12) and on each conv layer of the model (its own kernel sizes: 7x7 for the course's; output
          poisoned first, NaN never passes; the first wrong element is printed with its
          coordinates and both values; the failing output map is classified: counts of wrong,
          never written and NaN elements, the rows and columns that hold them, the worst ones)
          and runs the whole network with it on the test set. What the kernel prints is shown,
          capped at 300 lines. Without a usable GPU it only compiles, and says it cannot run the
          kernel here.
  time    the fair timing (docs/your-kernel.md, "How a kernel is timed fairly"), in a child process:
          every conv layer the kernel runs in the network at each batch (default 100 1000 10000),
          fresh inputs every repetition (N, default 10, after warm-up), L2 flushed, the device
          synchronised around each launch, the output of every repetition checked here at K
          positions (default 64); median, min and max per layer, a time below the physical floor
          flagged for review, the GPU, driver and clocks named
  info    registers per thread, shared, local (spills) and constant memory, and the occupancy of
          the file's block: from the driver on the GPU here, else from the compiler for --arch
          (default sm_90) with the occupancy computed from that architecture's limits
  ptx     the PTX NVRTC makes of FILE.cu (with .loc source lines)
  sass    the SASS of the cubin for --arch, by nvdisasm (scripts/install-nvdisasm.sh)
  history the versions of FILE.cu that compiled in the window's Your kernel tab or were checked or
          timed with kernel check and kernel time, one a line:
          number, when, check (passed, failed, compiled: not checked) and the op time (the sum
          over the conv layers at batch 10,000, else the largest batch timed). Kept in
          ~/.local/share/ConvScope/convscope/kernel-history ($CONVSCOPE_KERNEL_HISTORY overrides)
  --line N            ptx, sass: only the lines compiled from line N of FILE.cu
  --diff A B          history: the unified diff of versions A and B's source (--sass: their SASS,
                      without nvdisasm's addresses and encodings)
  --json FILE|-       check: the whole result as JSON (docs/your-kernel.md); - writes it to stdout
  --timeout SECONDS   the child's time limit (default 120): a kernel that never ends is stopped
  --no-network        skip the test-set accuracy
  --no-history        check, time: leave the kernel's history as it is
Exit code: 0 passed (or compiled, where no GPU can run it), 1 compile error, failed check or a
timing rejected.
Timing: convscope-cli bench --kernel FILE.cu.
)";

}  // namespace

std::string thisProgram() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw Error("cannot find this program's own path to run the kernel in a child process");
  return self.string();
}

namespace {

// --arch sm_XY, or empty for the default.
std::string architectureOption(const Args& args) {
  const std::optional<std::string> arch = args.value("arch");
  if (!arch) return {};
  // The architectures this build knows the limits of (and NVRTC 13 compiles for): named with the
  // refusal, rather than the compiler's own words for one it dropped (sm_70).
  std::string known;
  for (const std::string& a : knownArchitectures()) known += (known.empty() ? "" : ", ") + a;
  const std::string base =
      arch->size() > 1 && (arch->back() == 'a' || arch->back() == 'f') ? arch->substr(0, arch->size() - 1) : *arch;
  if (!architectureLimits(base))
    throw Error("--arch: '" + *arch + "' is not an architecture ConvScope can compile for here; these are: " + known +
                " (an 'a' after one, such as sm_90a, adds its own instructions)");
  return *arch;
}

int printCompileFailure(const std::filesystem::path& file, const gpu::CompiledUserKernel& kernel) {
  std::cout << file.string() << ": compile FAILED\n";
  for (const KernelDiagnostic& e : kernel.errors) std::cout << e.text() << "\n";
  return 1;
}

std::string bytes(int count) {
  return std::to_string(count) + (count == 1 ? " byte" : " bytes");
}

// The file read once and compiled by the sandboxed compiler (submitted_kernel.h) for --arch.
std::shared_ptr<const SubmittedKernel> submitForArchitecture(const std::filesystem::path& file, const Args& args) {
  SubmittedKernelOptions options;
  options.program = thisProgram();
  options.architecture = architectureOption(args);
  return submitKernel(file, file.string(), options);
}

int runInfo(const std::filesystem::path& file, const Args& args) {
  const std::shared_ptr<const SubmittedKernel> submitted = submitForArchitecture(file, args);
  const UserKernelSource& source = submitted->source;
  const gpu::UserKernelInspection& info = submitted->inspection;
  if (!info.kernel.ok()) return printCompileFailure(file, info.kernel);
  const KernelResources& r = info.resources;
  std::cout << file.string() << " for " << info.kernel.architecture << ", figures from " << info.figuresFrom << "\n";
  if (!r.found) std::cout << "  (the compiler reported no figures for " << info.kernel.loweredName << ")\n";
  std::cout << "  registers per thread      " << r.registers << "\n"
            << "  shared memory per block   " << bytes(r.sharedStaticBytes) << " (static)\n"
            << "  local memory per thread   " << bytes(r.localBytes);
  if (info.figuresFrom.rfind("the compiler", 0) == 0)
    std::cout << " (spills: " << bytes(r.spillStoreBytes) << " stored, " << bytes(r.spillLoadBytes) << " loaded)";
  std::cout << "\n"
            << "  constant memory           " << bytes(r.constantBytes) << "\n";
  const int threads = source.launch.blockX * source.launch.blockY;
  std::cout << "  block                     " << source.launch.blockX << "x" << source.launch.blockY << " = " << threads
            << " threads (" << (threads + 31) / 32 << " warps), tile " << source.launch.tileWidth << "x"
            << source.launch.tileHeight << "\n";
  if (!info.occupancy) {
    std::cout << "  occupancy                 " << info.occupancyFrom << "\n";
    return 0;
  }
  const BlockOccupancy& o = *info.occupancy;
  std::cout.precision(0);
  std::cout << std::fixed << "  occupancy                 " << o.blocksPerSm << " blocks per SM, " << o.activeWarps
            << " of " << o.maxWarps << " warps (" << o.fraction() * 100 << "%), limited by " << o.limitedBy << "\n";
  if (o.computed && o.blocksByWarps > 0) {
    const auto limit = blocksLimitText;
    std::cout << "    blocks per SM each resource allows: warps " << limit(o.blocksByWarps) << ", registers "
              << limit(o.blocksByRegisters) << ", shared memory " << limit(o.blocksByShared) << ", the block limit "
              << limit(o.blocksByBlockLimit) << "\n";
  }
  std::cout << "  (" << (o.computed ? "occupancy " : "") << info.occupancyFrom << ")\n";
  return 0;
}

// PTX or SASS, whole or only the lines of one source line (-lineinfo).
// "3" or "v3": a version number of `history`, which must hold it.
const KernelVersion& historyVersion(const KernelHistory& history, const std::string& text) {
  const std::string digits = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? text.substr(1) : text;
  const bool whole = !digits.empty() && digits.size() < 10 &&
                     std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
  const KernelVersion* version = whole ? history.version(std::stoi(digits)) : nullptr;
  if (!version)
    throw Error(history.kernelFile().string() + ": no version '" + text + "' in its history (" +
                (history.versions().empty() ? std::string("it has none")
                                            : "it holds v" + std::to_string(history.versions().front().number) +
                                                  " to v" + std::to_string(history.versions().back().number)) +
                "; 'kernel history FILE.cu' lists them)");
  return *version;
}

int runHistory(const std::filesystem::path& file, const Args& args) {
  const KernelHistory history(file);
  for (const std::string& skipped : history.skipped()) std::cerr << "skipped " << skipped << "\n";
  if (args.has("diff")) {
    const std::vector<std::string> which = args.values("diff");
    if (which.size() != 2) throw Error("option '--diff' takes two version numbers: --diff A B");
    const KernelVersion& a = historyVersion(history, which[0]);
    const KernelVersion& b = historyVersion(history, which[1]);
    const bool sass = args.has("sass");
    const auto textOf = [&](const KernelVersion& version) -> std::string {
      if (!sass) return version.source;
      if (!version.sass)
        throw Error(history.kernelFile().string() + ": version " + std::to_string(version.number) + " has no SASS (" +
                    version.sassMissingReason + ")");
      return comparableSass(*version.sass);
    };
    const std::string name = history.kernelFile().filename().string() + (sass ? " SASS" : "");
    std::cout << unifiedDiff(diffLines(textOf(a), textOf(b)), name + " v" + std::to_string(a.number),
                             name + " v" + std::to_string(b.number));
    return 0;
  }
  if (args.has("sass")) throw Error("option '--sass' goes with --diff A B");
  if (history.versions().empty()) {
    std::cout << file.string()
              << ": no versions kept yet (a version is kept each time the Your kernel tab, kernel check or "
                 "kernel time compiles it; "
              << history.folder().string() << ")\n";
    return 0;
  }
  for (const KernelVersion& version : history.versions()) {
    char line[160];
    std::snprintf(line, sizeof line, "v%-4d %s  %-8s", version.number, version.savedAt.c_str(),
                  version.status().c_str());
    std::cout << line;
    if (const std::optional<KernelOpTime> time = version.chartedOpTime()) {
      std::snprintf(line, sizeof line, "  op time %.3f ms at batch %d", time->seconds * 1e3, time->batch);
      std::cout << line;
    } else {
      std::cout << "  not timed";
    }
    if (!version.checkSummary.empty()) std::cout << "  (" << version.checkSummary << ")";
    std::cout << "\n";
  }
  return 0;
}

int runListing(const std::filesystem::path& file, const Args& args, ListingKind kind) {
  const std::shared_ptr<const SubmittedKernel> submitted = submitForArchitecture(file, args);
  const UserKernelSource& source = submitted->source;
  const gpu::CompiledUserKernel& kernel = submitted->compiled;
  if (!kernel.ok()) return printCompileFailure(file, kernel);
  const std::string listing = kind == ListingKind::Ptx ? kernel.ptx : disassembleCubin(kernel.image, file.string());
  if (!args.has("line")) {
    std::cout << listing;
    if (!listing.empty() && listing.back() != '\n') std::cout << "\n";
    return 0;
  }
  const int line = args.intValue("line", 1, 1);
  const std::vector<int> sourceLines = sourceLinesOfListing(listing, kind, source.path.string());
  const std::vector<int> found = listingLinesOfSourceLine(sourceLines, line);
  if (found.empty()) {
    std::cout << file.string() << ":" << line << ": no " << (kind == ListingKind::Ptx ? "PTX" : "SASS")
              << " comes from this line\n";
    return 0;
  }
  std::istringstream in(listing);
  int number = 0;
  size_t next = 0;
  for (std::string text; std::getline(in, text) && next < found.size();)
    if (++number == found[next]) {
      std::cout << number << ": " << text << "\n";
      ++next;
    }
  return 0;
}

// --json FILE: the whole result as JSON (docs/your-kernel.md); "-" writes it to stdout, and the
// text goes to stderr so that stdout stays JSON.
class CheckJsonOutput {
 public:
  explicit CheckJsonOutput(const Args& args) : path_(args.value("json")) {
    if (path_ && path_->empty()) throw Error("--json needs a file name (or - for stdout)");
  }
  std::ostream& text() const { return toStdout() ? std::cerr : std::cout; }
  void write(const json& result) const {
    if (!path_) return;
    if (toStdout()) {
      std::cout << result.dump(2) << "\n";
      return;
    }
    std::ofstream out(*path_);
    out << result.dump(2) << "\n";
    if (!out) throw Error(*path_ + ": cannot write the check's JSON there");
  }

 private:
  bool toStdout() const { return path_ && *path_ == "-"; }
  std::optional<std::string> path_;
};

// --seed N: a positive whole number, or 0 (none given: a fresh one).
uint64_t seedOption(const Args& args) {
  const auto text = args.value("seed");
  if (!text) return 0;
  size_t used = 0;
  uint64_t seed = 0;
  try {
    seed = std::stoull(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text->size() || seed == 0)
    throw Error("--seed: '" + *text + "' is not a positive whole number");
  return seed;
}

// A kernel that compiled where no GPU can run it: "<what>: cannot run the kernel here: <why>",
// and the same as the JSON result's failure. Exit code 0: nothing is wrong with the kernel.
int writeNotRun(const std::string& what, json& early, const CheckJsonOutput& jsonOutput) {
  const std::string failure = "cannot run the kernel here: " + gpuInfo().unusableReason;
  jsonOutput.text() << what << ": " << failure << "\n";
  early["status"] = "not-run";
  early["stage"] = "compile";
  early["failure"] = failure;
  jsonOutput.write(early);
  return 0;
}

// The kernel file read once and compiled in the sandbox (submitted_kernel.h); nullptr, with the
// failure printed and written, when it did not compile.
std::shared_ptr<const SubmittedKernel> submitOrReport(const std::filesystem::path& file, std::ostream& text,
                                                      json& early, const CheckJsonOutput& jsonOutput, bool withLog) {
  SubmittedKernelOptions options;
  options.program = thisProgram();
  std::shared_ptr<const SubmittedKernel> kernel = submitKernel(file, file.string(), options);
  if (kernel->ok()) return kernel;
  const CompiledUserKernel& compiled = kernel->compiled;
  text << file.string() << ": compile FAILED\n";
  for (const KernelDiagnostic& e : compiled.errors) text << e.text() << "\n";
  if (withLog && !compiled.log.empty() && !(compiled.errors.size() == 1 && compiled.errors[0].line == 0))
    text << "\nThe compiler's output:\n" << compiled.log << "\n";
  json errors = json::array();
  for (const KernelDiagnostic& e : compiled.errors)
    errors.push_back({{"file", e.file}, {"line", e.line}, {"message", e.message}});
  early["status"] = "compile-error";
  early["stage"] = "compile";
  early["errors"] = errors;
  early["failure"] = compiled.errorText();
  jsonOutput.write(early);
  return nullptr;
}

// The command line's results join the file's history as the window's do (docs/your-kernel.md,
// "History"): a student on a headless login node has no window. A history that cannot be written
// is said and costs nothing else; --no-history leaves it alone.
class CliHistory {
 public:
  CliHistory(const SubmittedKernel& kernel, const Args& args, std::ostream& text) : text_(text) {
    if (args.has("no-history")) return;
    try {
      history_.emplace(kernel.studentFile);
      version_ = history_->recordCompiled(kernel.source.text, std::nullopt,
                                          "recorded by convscope-cli, which makes no SASS for the history "
                                          "(convscope-cli kernel sass shows it)");
    } catch (const std::exception& e) {
      warn(e.what());
    }
  }
  void check(const UserKernelJobResult& result) {
    if (version_ > 0 && result.failure != "cancelled") history_->recordCheck(version_, result.passed, result.summary);
  }
  void timing(const UserKernelJobResult& result) {
    if (version_ == 0 || !result.passed) return;
    std::vector<KernelOpTime> sums;
    for (const UserKernelJobResult::LayerTiming& t : result.timings) {
      auto at = std::find_if(sums.begin(), sums.end(), [&](const KernelOpTime& s) { return s.batch == t.batch; });
      if (at == sums.end()) at = sums.insert(sums.end(), KernelOpTime{t.batch, 0.0});
      at->seconds += t.timing.time.median;
    }
    history_->recordOpTimes(version_, std::move(sums));
  }

 private:
  void warn(const std::string& why) { text_ << "note: not recorded in the kernel's history: " << why << "\n"; }
  std::ostream& text_;
  std::optional<KernelHistory> history_;
  int version_ = 0;
};

int runCheck(const std::filesystem::path& file, const Args& args) {
  const CheckJsonOutput jsonOutput(args);
  std::ostream& text = jsonOutput.text();
  const uint64_t seed = seedOption(args);
  json early = {{"schema", "convscope-kernel-check/1"}, {"file", file.string()}, {"task", "check"}};
  const std::shared_ptr<const SubmittedKernel> kernel = submitOrReport(file, text, early, jsonOutput, true);
  if (!kernel) return 1;
  const UserKernelSource& source = kernel->source;
  text << file.string() << ": compiled for " << kernel->compiled.architecture << " (kernel "
       << kernel->compiled.loweredName << ", block " << source.launch.blockX << "x" << source.launch.blockY << ", tile "
       << source.launch.tileWidth << "x" << source.launch.tileHeight << ")\n";
  if (!kernel->sandbox.enforced)
    text << "note: the compiler ran without its second wall (" << kernel->sandbox.reason << ")\n";
  CliHistory history(*kernel, args, text);
  if (!gpuInfo().usable) return writeNotRun("not checked", early, jsonOutput);
  UserKernelJob job;
  job.task = UserKernelJob::Task::Check;
  job.file = file;
  job.kernel = kernel;
  job.shapes = args.intValue("shapes", 12, 1);
  job.seed = seed;
  job.program = thisProgram();
  job.network = !args.has("no-network");
  job.model = args.value("model").value_or(defaultModelPath());
  job.data = args.value("data").value_or(defaultDataFolder().string());
  job.timeLimitSeconds = args.intValue("timeout", 120, 1);
  const UserKernelJobResult result = runUserKernelJob(job, [](const std::string& line) { std::cerr << line; });
  history.check(result);
  text << result.report;
  jsonOutput.write(userKernelResultToJson(job, result));
  return result.passed ? 0 : 1;
}

int runTime(const std::filesystem::path& file, const Args& args) {
  // The options first: a wrong one is refused with or without a GPU.
  const uint64_t seed = seedOption(args);
  const CheckJsonOutput jsonOutput(args);
  std::ostream& text = jsonOutput.text();
  json early = {{"schema", "convscope-kernel-check/1"}, {"file", file.string()}, {"task", "timing"}};
  const std::shared_ptr<const SubmittedKernel> kernel = submitOrReport(file, text, early, jsonOutput, false);
  if (!kernel) return 1;
  CliHistory history(*kernel, args, text);
  if (!gpuInfo().usable) {
    text << file.string() << ": compiled; ";
    return writeNotRun("not timed", early, jsonOutput);
  }
  UserKernelJob job;
  job.task = UserKernelJob::Task::Timing;
  job.file = file;
  job.kernel = kernel;
  job.program = thisProgram();
  job.model = args.value("model").value_or(defaultModelPath());
  job.data = args.value("data").value_or(defaultDataFolder().string());
  job.repeats = args.intValue("repeats", 10, 1);
  job.warmups = args.intValue("warmups", 2, 0);
  job.timingSamples = args.intValue("samples", 64, 1);
  job.timeLimitSeconds = args.intValue("timeout", 600, 1);
  job.seed = seed;
  if (!args.values("batches").empty()) {
    job.batches.clear();
    for (const std::string& b : args.values("batches")) job.batches.push_back(std::stoi(b));
  }
  const UserKernelJobResult result = runUserKernelJob(job, [](const std::string& line) { std::cerr << line; });
  history.timing(result);
  text << result.report;
  jsonOutput.write(userKernelResultToJson(job, result));
  return result.passed ? 0 : 1;
}

// The child's side: everything that runs the kernel, its result as JSON in --json.
int runIsolated(const std::filesystem::path& file, const Args& args) {
  const std::filesystem::path out = args.value("json").value_or("");
  if (out.empty()) throw Error("kernel run-isolated: --json OUT is required");
  json result = {{"file", file.string()}};
  const auto write = [&] { std::ofstream(out) << result.dump(2); };
  // The kernel's printf and assert output (the GPU's printf writes to this process's stdout) goes
  // to a file of its own, which the parent reads back capped; ConvScope's own lines go to stderr.
  if (const auto kernelOutput = args.value("kernel-output")) {
    std::fflush(stdout);
    const int fd = ::open(kernelOutput->c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0)
      throw Error(*kernelOutput + ": cannot write the kernel's output there: " + std::strerror(errno));
    ::close(fd);
    // Line by line: a process that faults ends with _Exit, which flushes no buffer.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
  }
  bool kernelLoaded = false;  // from here on a failure may be the kernel's fault on the GPU
  try {
    // The module compiled once in the sandbox (submitted_kernel.h), with the source it came from:
    // this process never compiles, so every task runs the same machine code. `file` is the
    // student's name for it, which every message uses.
    const std::filesystem::path compiledFolder = args.value("compiled").value_or("");
    if (compiledFolder.empty()) throw Error("kernel run-isolated: --compiled FOLDER is required");
    const std::filesystem::path copy = compiledFolder / "source.cu";
    std::ifstream in(copy, std::ios::binary);
    if (!in) throw Error(copy.string() + ": cannot read the submission's copy");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    gpu::CompiledUserKernel kernel = readCompiledKernel(compiledFolder);
    kernel.source = parseUserKernelSource(file, text);
    result["id"] = kernel.source.id;
    if (!kernel.ok()) {
      result["stage"] = "compile";
      result["error"] = kernel.errorText();
      write();
      return 1;
    }
    const ConvVariant& row = gpu::installUserKernel(kernel);
    kernelLoaded = true;
    // The seeds, from a file only this user can read (never on the command line).
    json secrets = json::object();
    if (const auto secretsFile = args.value("secrets")) {
      std::ifstream secretsIn(*secretsFile);
      secrets = json::parse(secretsIn, nullptr, false);
      if (!secrets.is_object()) throw Error(*secretsFile + ": the seeds' file is not a JSON object");
    }
    const auto secretSeed = [&](const char* name) -> uint64_t {
      return std::stoull(secrets.value(name, std::string("1")));
    };
    UserKernelTask task;
    task.kind = userKernelTaskKind(args.value("task").value_or("check"));
    task.model = args.value("model").value_or(defaultModelPath());
    task.data = args.value("data").value_or(defaultDataFolder().string());
    // The check and the network pass write the kernel's raw outputs into this folder, made by the
    // parent, which compares them: the expected values and the labels never enter this process.
    task.outputs = args.value("outputs").value_or("");
    if ((task.kind == UserKernelTask::Kind::Check || task.kind == UserKernelTask::Kind::Network) &&
        task.outputs.empty())
      throw Error("kernel run-isolated: --outputs FOLDER is required for --task " +
                  args.value("task").value_or("check"));
    task.benchJson = out.string() + ".bench.json";
    task.seed = secretSeed("seed");
    task.sampleSeed = secretSeed("sample_seed");
    task.shapes = args.intValue("shapes", 12, 1);
    task.samples = args.intValue("samples", 64, 1);
    task.repeats = args.intValue("repeats", 10, 1);
    task.warmups = args.intValue("warmups", 2, 0);
    if (const std::vector<std::string> batches = args.values("batches"); !batches.empty()) {
      task.batches.clear();
      for (const std::string& b : batches) task.batches.push_back(std::stoi(b));
    }
    runUserKernelTask(row, task, result, write, [](const std::string& line) { std::cerr << line << "\n"; });
    return 0;
  } catch (const std::exception& e) {
    result["error"] = e.what();
    // What broke the GPU context, when the kernel did: the call that failed first may be a
    // library's (cuBLAS's "execution failed"), which does not say that the kernel faulted.
    if (kernelLoaded)
      if (const std::string fault = gpu::brokenContextError(); !fault.empty()) result["deviceFault"] = fault;
    write();
    std::fflush(stdout);  // the kernel's last output (an assertion's message) into its file
    std::cerr << "error: " << e.what() << "\n" << std::flush;
    // After a fault the CUDA context is broken: leave without the destructors and the runtime's
    // teardown, which must not keep this process alive past its result.
    std::_Exit(1);
  }
}

}  // namespace

int runKernel(const std::vector<std::string>& tokens) {
  if (tokens.empty() || tokens[0] == "--help" || tokens[0] == "-h") {
    std::cout << kHelp << "The templates on this machine: " << kernelTemplatesDir() << "\n";
    return tokens.empty() ? 2 : 0;
  }
  const std::string verb = tokens[0];
  if (tokens.size() < 2 || tokens[1].rfind("--", 0) == 0)
    throw Error("kernel " + verb + ": which kernel file? (kernel " + verb + " FILE.cu)");
  const std::filesystem::path file = tokens[1];
  const std::vector<std::string> rest(tokens.begin() + 2, tokens.end());
  if (verb == "check")
    return runCheck(file,
                    Args(rest, {"shapes", "seed", "timeout", "model", "data", "json"}, {"no-network", "no-history"}));
  if (verb == "time")
    return runTime(file,
                   Args(rest, {"batches", "repeats", "warmups", "samples", "seed", "timeout", "model", "data", "json"},
                        {"no-history"}));
  if (verb == "info") return runInfo(file, Args(rest, {"arch"}, {}));
  if (verb == "ptx") return runListing(file, Args(rest, {"arch", "line"}, {}), ListingKind::Ptx);
  if (verb == "sass") return runListing(file, Args(rest, {"arch", "line"}, {}), ListingKind::Sass);
  if (verb == "history") return runHistory(file, Args(rest, {"diff"}, {"sass"}));
  if (verb == "run-isolated")
    return runIsolated(file, Args(rest,
                                  {"task", "json", "kernel-output", "outputs", "compiled", "secrets", "shapes", "model",
                                   "data", "batches", "repeats", "warmups", "samples"},
                                  {}));
  if (verb == "compile-isolated") {
    // The sandboxed compiler's process (submitted_kernel.h); `file` is the grader's private folder.
    const Args options(rest, {"student-file", "arch"}, {"skip-include-filter-for-tests"});
    IsolatedCompileRequest request;
    request.folder = file;
    request.studentFile = options.value("student-file").value_or("kernel.cu");
    request.architecture = options.value("arch").value_or(gpu::defaultInspectionArchitecture());
    request.skipIncludeFilter = options.has("skip-include-filter-for-tests");
    return runIsolatedCompile(
        request, gpu::toolkitIncludeFolders(), [&] { gpu::warmUpUserKernelCompiler(request.architecture); },
        [](const UserKernelSource& source, const std::string& architecture) {
          gpu::UserKernelBuildOptions build;
          build.architecture = architecture;
          build.ptxasInfo = true;
          build.keepPtx = true;
          return gpu::compileUserKernel(source, build);
        });
  }
  throw Error("kernel: unknown verb '" + verb + "' (check, time, info, ptx, sass, history; see --help)");
}

}  // namespace convscope::cli
