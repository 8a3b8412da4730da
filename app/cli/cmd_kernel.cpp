// convscope-cli kernel: a student's kernel file (docs/your-kernel.md) compiled, checked and, with
// bench --kernel, timed. The kernel runs only in a child process ('kernel run-isolated', this same
// program) with a time limit, so that a fault or an endless loop ends that process and the
// message says what happened.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/conv_check.h"
#include "app/core/conv/user_kernel_job.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/gpu_platform.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/data_dir.h"
#include "app/core/util/error.h"
#include "gpu/user_kernel.h"

namespace convscope::cli {
namespace {

using nlohmann::json;

constexpr const char* kHelp = R"(usage: convscope-cli kernel check FILE.cu [--shapes N] [--seed S] [--timeout SECONDS]
                                       [--model FILE.onnx] [--data DIR] [--no-network]

Your own convolution kernel (the contract: docs/your-kernel.md; templates: examples/kernels/).
  check   compiles FILE.cu with NVRTC (errors as file:line), then, in a child process with a time
          limit, checks it against a double-precision reference on N fresh random shapes (default
          12; output poisoned first, NaN never passes; the first wrong element is printed with its
          coordinates and both values) and runs the whole network with it on the test set.
          Without a usable GPU it only compiles, and says it cannot run the kernel here.
  --timeout SECONDS   the child's time limit (default 120): a kernel that never ends is stopped
  --no-network        skip the test-set accuracy
Exit code: 0 passed (or compiled, where no GPU can run it), 1 compile error or failed check.
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

void printCompileErrors(const gpu::CompiledUserKernel& kernel) {
  for (const KernelDiagnostic& e : kernel.errors) std::cout << e.text() << "\n";
  if (!kernel.log.empty() && kernel.errors.size() == 1 && kernel.errors[0].line == 0) return;
  if (!kernel.log.empty()) std::cout << "\nThe compiler's output:\n" << kernel.log << "\n";
}

int runCheck(const std::filesystem::path& file, const Args& args) {
  const UserKernelSource source = readUserKernelSource(file);
  const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(source);
  if (!kernel.ok()) {
    std::cout << file.string() << ": compile FAILED\n";
    printCompileErrors(kernel);
    return 1;
  }
  std::cout << file.string() << ": compiled for " << kernel.architecture << " (kernel " << kernel.loweredName
            << ", block " << source.launch.blockX << "x" << source.launch.blockY << ", tile " << source.launch.tileWidth
            << "x" << source.launch.tileHeight << ")\n";
  if (const GpuInfo& gpu = gpuInfo(); !gpu.usable) {
    std::cout << "not checked: cannot run the kernel here: " << gpu.unusableReason << "\n";
    return 0;
  }
  UserKernelJob job;
  job.task = UserKernelJob::Task::Check;
  job.file = file;
  job.shapes = args.intValue("shapes", 12, 1);
  if (const auto seed = args.value("seed")) {
    size_t used = 0;
    try {
      job.seed = std::stoull(*seed, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != seed->size() || job.seed == 0)
      throw Error("--seed: '" + *seed + "' is not a positive whole number");
  }
  job.program = thisProgram();
  job.network = !args.has("no-network");
  job.model = args.value("model").value_or(defaultModelPath());
  job.data = args.value("data").value_or(defaultDataFolder().string());
  job.timeLimitSeconds = args.intValue("timeout", 120, 1);
  const UserKernelJobResult result = runUserKernelJob(job, [](const std::string& line) { std::cerr << line; });
  std::cout << result.report;
  return result.passed ? 0 : 1;
}

// The child's side: everything that runs the kernel, its result as JSON in --json.
int runIsolated(const std::filesystem::path& file, const Args& args) {
  const std::filesystem::path out = args.value("json").value_or("");
  if (out.empty()) throw Error("kernel run-isolated: --json OUT is required");
  json result = {{"file", file.string()}};
  const auto write = [&] { std::ofstream(out) << result.dump(2); };
  try {
    const UserKernelSource source = readUserKernelSource(file);
    result["id"] = source.id;
    const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(source);
    if (!kernel.ok()) {
      result["stage"] = "compile";
      result["error"] = kernel.errorText();
      write();
      return 1;
    }
    const ConvVariant& row = gpu::installUserKernel(kernel);
    const std::string task = args.value("task").value_or("check");
    if (task == "check") {
      result["stage"] = "check";
      const uint64_t seed = std::stoull(args.value("seed").value_or("1"));
      const int count = args.intValue("shapes", 12, 1);
      std::cerr << "checking " << count << " random shapes (seed " << seed << ")\n";
      const auto backend = createConvBackend(row.id);
      const ConvCheckResult check =
          checkConvAgainstReference(*backend, randomCheckShapes(seed, count), seed, row.unsupportedReason);
      result["passed"] = check.passed();
      result["summary"] = check.summary();
      result["shapesChecked"] = check.checked.size();
      if (check.firstWrong) {
        const ConvMismatch& m = *check.firstWrong;
        result["firstWrong"] = {{"n", m.n},
                                {"m", m.m},
                                {"h", m.h},
                                {"w", m.w},
                                {"expected", m.expected},
                                {"got", m.got},
                                {"allowed", m.allowed},
                                {"shape", m.problem.describe()}};
      }
      write();
      if (!check.passed() || args.has("no-network")) return check.passed() ? 0 : 1;
      result["stage"] = "network";
      std::cerr << "running the network with it on the test set\n";
      const std::filesystem::path model = args.value("model").value_or(defaultModelPath());
      const ImageSet images = ImageSet::loadIdxFolder(args.value("data").value_or(defaultDataFolder().string()));
      Engine engine(loadOnnxModel(model), row.id);
      const ClassificationRun run = classify(engine, images, 0, images.count(), 1000);
      json network = {{"model", model.filename().string()},
                      {"correct", run.correct},
                      {"labelled", run.labelled},
                      {"accuracy", run.labelled ? double(run.correct) / run.labelled : 0.0}};
      json fallbacks = json::array();
      for (const ConvLayerTime& t : run.convTimes)
        if (t.variant != row.id)
          fallbacks.push_back(t.problem.describe() + " ran on " + t.variant + ": " + t.fallbackReason);
      network["fallbacks"] = fallbacks;
      if (const auto card = readModelCard(model)) network["courseCorrect"] = card->testCorrect;
      result["network"] = network;
      result["stage"] = "done";
      write();
      return 0;
    }
    if (task == "bench") {
      result["stage"] = "bench";
      BenchmarkOptions options;
      options.model = args.value("model").value_or(defaultModelPath());
      options.variants = {row.id};
      for (const std::string& b : args.values("batches")) options.batches.push_back(std::stoi(b));
      if (options.batches.empty()) options.batches = {100, 1000, 10000};
      options.repeats = args.intValue("repeats", 10, 1);
      options.warmups = args.intValue("warmups", 2, 0);
      const ImageSet images = ImageSet::loadIdxFolder(args.value("data").value_or(defaultDataFolder().string()));
      const BenchmarkReport report = runBenchmark(options, images, [](const std::string& message) {
        std::cerr << "bench: " << message << "\n";
        return true;
      });
      const std::filesystem::path benchJson = out.string() + ".bench.json";
      writeBenchmarkJson(report, benchJson);
      result["benchmark"] = benchJson.string();
      result["stage"] = "done";
      write();
      return 0;
    }
    throw Error("kernel run-isolated: --task is check or bench, not '" + task + "'");
  } catch (const std::exception& e) {
    result["error"] = e.what();
    write();
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
    return runCheck(file, Args(rest, {"shapes", "seed", "timeout", "model", "data"}, {"no-network"}));
  if (verb == "run-isolated")
    return runIsolated(file,
                       Args(rest, {"task", "json", "shapes", "seed", "model", "data", "batches", "repeats", "warmups"},
                            {"no-network"}));
  throw Error("kernel: unknown verb '" + verb + "' (check; see --help)");
}

}  // namespace convscope::cli
