// The course's measurement, for any set of variants and batch sizes: the first N test images as
// one batch, warm-up, then R timed inferences; per conv layer the op time (median, min, max of
// the R samples; CUDA events on the GPU, per-op setup included), achieved GFLOP/s and GB/s; per
// run the whole inference time, the host-to-device copy and the accuracy. The result is data:
// JSON (schema in docs/benchmark-json.md) and CSV, read back by the GUI and any script.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/conv/kernel_history.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"

namespace convscope {

struct SampleStats {
  double median = 0.0, min = 0.0, max = 0.0;  // seconds
  static SampleStats of(std::vector<double> samples);
};

// A layer's problem as the benchmark JSON writes it (docs/benchmark-json.md) and back; reading
// refuses a problem no layer can have (throws convscope::Error).
nlohmann::json convProblemToJson(const ConvProblem& problem);
ConvProblem convProblemFromJson(const nlohmann::json& json);

struct LayerBenchmark {
  std::string node;
  ConvProblem problem;
  std::string ranVariant;  // differs from the run's variant when it fell back for this shape
  std::string fallbackReason;
  SampleStats opTime;
  double gflops = 0.0;           // at the median op time
  double gbytesPerSecond = 0.0;  // compulsory traffic (input, weights, output once) at the median
  // The activation and pooling nodes the variant applied in the same kernel: the op time is theirs too.
  std::vector<std::string> fusedNodes;
  int64_t outputElements = 0;  // what the stage wrote: the pooled output when a pooling was fused
};

// One stage of the end-to-end step (Engine::timeEndToEndStages), timed in a pass of its own after
// the end-to-end runs: "upload", "resize", each plan stage ("conv 1 + tanh + max-pool", "dense 2"),
// "download", "host: probabilities". `kind` says what work it is (evaluation.h, StageTime).
struct EndToEndStage {
  std::string name;
  std::string kind;
  SampleStats time;  // seconds over the repetitions of that pass
};

struct BenchmarkRun {
  std::string variant;
  int batch = 0;
  std::vector<LayerBenchmark> layers;
  SampleStats inference;  // the whole forward pass with copies, host clock
  SampleStats upload;     // host-to-device copy of the batch (zero on the CPU)
  // The end-to-end path (Engine::inferBytes): the same images as 8-bit pixels in pinned host
  // memory to probabilities in host memory, host clock; absent (all zero) for sets without bytes.
  SampleStats endToEnd;
  bool endToEndReplayed = false;  // its timed runs replayed a recorded CUDA graph
  int endToEndCorrect = 0;        // must equal `correct`: the same predictions
  // Where the end-to-end time goes, stage by stage, in order (never replayed; end_to_end stays the
  // unperturbed figure). Empty in files written before it was measured.
  std::vector<EndToEndStage> endToEndStages;
  double accuracy = 0.0;
  int correct = 0;
};

struct BenchmarkReport {
  std::string model;
  std::string date;    // ISO 8601, UTC
  std::string device;  // GPU name, or "CPU only"
  std::string driver, cudaRuntime, cudnn;
  std::string host;  // CPU description
  // The figures of the GPU the runs were measured on (clocks, bus width, SMs, a copy measured on
  // it): what its peaks and floors are computed from wherever the file is opened, with no table of
  // GPU names. Set when a GPU variant ran; nullopt for a CPU-only run and in older files.
  std::optional<DeviceFigures> deviceFigures;
  int repeats = 0;
  int warmups = 0;
  std::vector<BenchmarkRun> runs;
};

struct BenchmarkOptions {
  std::filesystem::path model;
  std::vector<std::string> variants;
  std::vector<int> batches;
  int repeats = 10;
  int warmups = 2;
  // Also time the end-to-end path from 8-bit images (BenchmarkRun::endToEnd), where the set has them.
  bool endToEnd = true;
};

// `progress(message)` reports each step on its way; returning false stops the benchmark with
// the runs done so far.
BenchmarkReport runBenchmark(const BenchmarkOptions& options, const ImageSet& images,
                             const std::function<bool(const std::string&)>& progress = {});

// How runs join a report that has some of the same variant already.
enum class RunMerge {
  kReplaceTheVariants,  // the added variants' earlier runs give way to all of the new ones
  kNewerPerBatch,       // a run of the same variant and batch is replaced; the others join
  kShownPerBatch,       // a run of the same variant and batch stays; the others join
};
// Adds `added`'s runs to `into` by `rule`; returns how many of them joined.
int mergeRuns(BenchmarkReport& into, const BenchmarkReport& added, RunMerge rule);

// Per batch, the sum over the conv layers of their median op time (the first run of each batch):
// what a kernel's history keeps of a benchmark.
std::vector<KernelOpTime> opTimeSumsPerBatch(const BenchmarkReport& report);

void writeBenchmarkJson(const BenchmarkReport& report, const std::filesystem::path& path);
BenchmarkReport readBenchmarkJson(const std::filesystem::path& path);
void writeBenchmarkCsv(const BenchmarkReport& report, const std::filesystem::path& path);

}  // namespace convscope
