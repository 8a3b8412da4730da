#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/picture_input.h"
#include "app/core/engine/submitted_kernel.h"
#include "app/core/engine/user_kernel_job.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"

namespace convscope::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: convscope-cli bench [--model FILE.onnx] [--variants all|ID,ID...] [--batches 100,1000,10000]
                          [--repeats R] [--warmups W] [--json OUT.json] [--csv OUT.csv] [--data DIR]
                          [--kernel FILE.cu ...] [--timeout SECONDS]

Times every variant at every batch size, the course's way: the first N test images as one batch,
W warm-up inferences, then R timed ones. Per conv layer: op time (median, min, max; CUDA events
on the GPU, per-op setup included), GFLOP/s and GB/s; per run: inference and upload time and
accuracy, and the end-to-end time: the same images as 8-bit pixels in pinned host memory to
probabilities in host memory (on a GPU only the bytes are copied, and resized there; batches up
to 1,024 replay a CUDA graph). Progress goes to stderr; the JSON schema is in docs/benchmark-json.md.
  --variants all    every variant that can run here (default), or a comma-separated list;
                    with --kernel the default is the preferred course variant, "none" skips them
  --batches LIST    batch sizes (default 100,1000,10000)
  --repeats R       timed repetitions (default 10); --warmups W (default 2)
  --kernel FILE.cu  also time your own kernel (docs/your-kernel.md), in a child process with a time
                    limit (--timeout, default 600 s); its runs join the course's, named after the file
                    (without a GPU: each kernel compiled, "not timed", exit 0, as kernel time)
)";

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

int parseBatch(const std::string& text) {
  size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 1) throw Error("--batches: '" + text + "' is not a positive whole number");
  return value;
}

// bench --kernel where no GPU can time: every kernel compiled in the sandbox, as kernel check and
// kernel time do there, so that the three commands give one verdict on one machine.
int compileWithoutGpu(const std::vector<std::string>& kernels, const std::string& whyNoGpu) {
  bool allCompiled = true;
  for (const std::string& kernel : kernels) {
    SubmittedKernelOptions options;
    options.program = thisProgram();
    const std::shared_ptr<const SubmittedKernel> submitted = submitKernel(kernel, kernel, options);
    if (!submitted->ok()) {
      allCompiled = false;
      std::cout << kernel << ": compile FAILED\n";
      for (const KernelDiagnostic& e : submitted->compiled.errors) std::cout << e.text() << "\n";
      continue;
    }
    std::cout << kernel << ": compiled; not timed: cannot run the kernel here: " << whyNoGpu << "\n";
  }
  return allCompiled ? 0 : 1;
}

}  // namespace

int runBench(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << kHelp;
    return 0;
  }
  const Args args(
      tokens, {"model", "variants", "batches", "repeats", "warmups", "json", "csv", "data", "kernel", "timeout"}, {});
  BenchmarkOptions options;
  options.model = args.value("model").value_or(defaultModelPath());
  const std::vector<std::string> kernels = args.values("kernel");
  // A kernel is timed on a GPU or not at all: said before anything else runs (the CPU variants of
  // the comparison took most of a minute before the kernel's failure). Without a GPU the verdict
  // is kernel time's: each kernel is compiled (exit 1 when one does not), then "compiled, not
  // timed", exit 0 (nothing is wrong with the kernels).
  if (!kernels.empty()) {
    if (const GpuInfo& gpu = gpuInfo(); !gpu.usable) return compileWithoutGpu(kernels, gpu.unusableReason);
  }
  // With --kernel and no --variants: the kernel beside the course's default, not every variant.
  const std::string variants = args.value("variants").value_or(kernels.empty() ? "all" : defaultConvVariant());
  if (variants == "none") {
  } else if (variants == "all") {
    for (const ConvVariant& v : convVariants())
      if (v.unavailableReason().empty()) options.variants.push_back(v.id);
  } else {
    for (const std::string& id : splitList(variants)) {
      const ConvVariant& v = findConvVariant(id);
      if (const std::string reason = v.unavailableReason(); !reason.empty())
        throw Error("kernel variant '" + id + "' cannot run here: " + reason);
      options.variants.push_back(id);
    }
  }
  for (const std::string& batch : splitList(args.value("batches").value_or("100,1000,10000")))
    options.batches.push_back(parseBatch(batch));
  options.repeats = args.intValue("repeats", 10, 1);
  options.warmups = args.intValue("warmups", 2, 0);

  // The test set's IDX files, or photos in class subfolders brought to the model's input by its
  // card's rule (the first variant's engine frames them; each variant's batches then map the values alike).
  const std::string data = args.value("data").value_or(defaultDataFolder().string());
  ImageSet images;
  if (isImageFolder(data)) {
    const auto model = loadOnnxModel(options.model);
    const std::optional<ModelCard> card = readModelCard(options.model);
    Engine framing(model, options.variants.empty() ? defaultConvVariant() : options.variants.front());
    framing.setPreprocessing(preprocessingFor(*model, card));
    images = loadImageFolder(framing, data, card ? card->classNames : std::vector<std::string>{});
  } else {
    images = ImageSet::loadIdxFolder(data);
  }
  const auto progress = [](const std::string& message) {
    std::cerr << "bench: " << message << "\n";
    return true;
  };
  BenchmarkReport report = options.variants.empty() ? BenchmarkReport{} : runBenchmark(options, images, progress);
  for (const std::string& kernel : kernels) {
    UserKernelJob job;
    job.task = UserKernelJob::Task::Bench;
    job.program = thisProgram();
    job.file = kernel;
    job.batches = options.batches;
    job.repeats = options.repeats;
    job.warmups = options.warmups;
    job.model = options.model;
    job.data = args.value("data").value_or(defaultDataFolder().string());
    job.timeLimitSeconds = args.intValue("timeout", 600, 1);
    std::cerr << "bench: timing " << kernel << " in a child process\n";
    const UserKernelJobResult result = runUserKernelJob(job, {});
    if (!result.benchmark) throw Error(kernel + ": " + (result.failure.empty() ? result.childOutput : result.failure));
    if (report.runs.empty()) {
      const std::vector<BenchmarkRun> none;
      report = *result.benchmark;
      report.runs = none;
    }
    for (const BenchmarkRun& run : result.benchmark->runs) report.runs.push_back(run);
  }

  std::printf("Device: %s (driver %s, CUDA runtime %s, cuDNN %s); host: %s\n", report.device.c_str(),
              report.driver.c_str(), report.cudaRuntime.c_str(), report.cudnn.empty() ? "-" : report.cudnn.c_str(),
              report.host.c_str());
  std::printf("Model: %s, %d repetitions after %d warm-ups, %s\n\n", report.model.c_str(), report.repeats,
              report.warmups, report.date.c_str());
  std::printf("%-24s %7s %14s %14s %10s %10s %12s %9s\n", "variant", "batch", "conv1 op (ms)", "conv2 op (ms)",
              "total (ms)", "upload", "end to end", "accuracy");
  for (const BenchmarkRun& run : report.runs) {
    std::printf("%-24s %7d", run.variant.c_str(), run.batch);
    for (size_t l = 0; l < 2; ++l)
      if (l < run.layers.size())
        std::printf(" %13.3f%s", run.layers[l].opTime.median * 1e3,
                    !run.layers[l].fallbackReason.empty() ? "*"
                    : !run.layers[l].fusedNodes.empty()   ? "+"
                                                          : " ");
      else
        std::printf(" %14s", "-");
    std::printf(" %10.3f %10.3f %11.3f%s %9.4f\n", run.inference.median * 1e3, run.upload.median * 1e3,
                run.endToEnd.median * 1e3, run.endToEndReplayed ? "g" : " ", run.accuracy);
    // The same input bits: only a variant whose sums change order between runs (atomics) may differ.
    if (run.endToEnd.median > 0 && run.endToEndCorrect != run.correct)
      std::fprintf(stderr, "bench: warning: %s at batch %d: %d right end to end, %d on the float path\n",
                   run.variant.c_str(), run.batch, run.endToEndCorrect, run.correct);
  }
  std::printf(
      "(* the layer fell back to another variant for its shape; + the op time includes the activation and\n"
      "   pooling fused into the conv's kernel -- for a whole-network variant the conv1 column is the whole\n"
      "   network in one kernel; end to end: 8-bit images in pinned host memory to probabilities in host memory,\n"
      "   g: replayed as a CUDA graph; see the JSON)\n");
  if (const auto json = args.value("json")) writeBenchmarkJson(report, *json);
  if (const auto csv = args.value("csv")) writeBenchmarkCsv(report, *csv);
  return 0;
}

}  // namespace convscope::cli
