// The parent's side of running a student's kernel: ConvScope starts `convscope-cli kernel
// run-isolated` as a child process with a time limit and reads back its result file. A kernel
// that faults or never ends ends that process only; the result then says what happened (an
// illegal memory access, the time limit). The CLI and the window both run kernels this way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_failure_map.h"
#include "app/core/conv/kernel_messages.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/fair_timing.h"
#include "app/core/engine/submitted_kernel.h"

namespace convscope {

struct UserKernelJob {
  // Bench: the course's measurement in the kernel's process (runBenchmark). Timing: the fair
  // timing (fair_timing.h): fresh inputs each repetition, every repetition's output checked here.
  enum class Task { Check, Bench, Timing };
  Task task = Task::Check;
  std::filesystem::path program;  // convscope-cli
  std::filesystem::path file;     // the kernel file (read only when `kernel` is not set)
  // The kernel read once and compiled once in the sandbox (submitted_kernel.h): every step of
  // this job, and every other job given the same one, runs that module. Not set: the job submits
  // `file` itself first.
  std::shared_ptr<const SubmittedKernel> kernel;
  // Check: `shapes` random shapes from `seed` (0: a fresh one from the system's random source),
  // then the network on the test set unless !network. Seeds reach the child in a file of the
  // job's private folder, never on its command line (which `ps` shows to every user).
  int shapes = 12;
  uint64_t seed = 0;
  bool network = true;
  // Bench: the course's measurement (runBenchmark) at these batches.
  std::vector<int> batches = {100, 1000, 10000};
  int repeats = 10;
  int warmups = 2;
  // Timing: output positions checked after each repetition (chosen by a seed of this process's).
  int timingSamples = 64;
  uint64_t timingSampleSeed = 0;  // 0: a fresh one (what grading does); set: the same positions again
  std::filesystem::path model, data;
  double timeLimitSeconds = 120.0;
  // The child's resident host memory; past it the child is stopped ("memory limit"). 0: the
  // engine's memory limit (memory_limit.h) and 2 GB for the CUDA libraries and the kernel's
  // compiler, which the engine's estimate does not count.
  int64_t memoryLimitBytes = 0;
};

struct UserKernelJobResult {
  bool passed = false;                    // check: every shape right and the network ran; bench: timed
  std::string stage;                      // where it stopped: "compile", "check", "network", "bench", "done"
  std::string failure;                    // what went wrong, in words, when !passed
  bool processDied = false;               // the child faulted or was stopped at the time or memory limit
  std::string summary;                    // the check's one line
  std::optional<std::string> firstWrong;  // "wrong output at [n=..][m=..][h=..][w=..] ..."
  int firstWrongN = -1, firstWrongM = -1, firstWrongH = -1, firstWrongW = -1;
  double expected = 0.0, got = 0.0;
  int shapesChecked = 0;
  uint64_t seed = 0;  // the check's shapes and values: --seed repeats them
  // The failing shape's output map, classified: where the kernel is wrong (conv_failure_map.h).
  std::optional<ConvFailureMap> failureMap;
  struct Shape {
    std::string shape;    // ConvProblem::describe()
    std::string outcome;  // "passed", "failed", "declined", "not run"
    std::string reason;   // declined: why
  };
  std::vector<Shape> shapes;  // the check's shapes in order
  // What the kernel printed (printf, assert) during the check, capped (kernel_messages.h). The
  // network pass and the timing run the same module, printf included; what it prints there goes
  // nowhere (the kernel cannot tell: its printf works the same).
  KernelOutput kernelOutput;
  std::optional<double> accuracy;        // the network with the kernel, on the test set
  std::optional<double> courseAccuracy;  // the course's FP32 variants' (the model card's)
  std::vector<std::string> fallbacks;    // layers the kernel declined, and who ran them
  std::optional<BenchmarkReport> benchmark;
  // Timing: every layer the kernel ran, at every batch, judged here (rejected, below the floor).
  struct LayerTiming {
    int batch = 0;
    FairLayerTiming timing;
  };
  std::vector<LayerTiming> timings;
  struct TimingDevice {
    std::string name, computeCapability, driver, runtime;
    int smClockMHz = 0, memoryClockMHz = 0;  // the peak clocks the runtime reports; 0: unknown
  };
  TimingDevice timingDevice;  // the GPU the times were taken on, as the kernel's process saw it
  std::string report;         // all of the above for people, several lines
  std::string childOutput;    // ConvScope's own messages from the child (the kernel's output: kernelOutput)
};

// The shapes `job`'s check runs, from `seed`: its random shapes and its model's own conv layers
// (conv_check.h, checkShapes). Throws convscope::Error when the model cannot be read.
std::vector<ConvProblem> checkShapesOf(const UserKernelJob& job, uint64_t seed);

// Runs `job` in a child process; `progress(line)` receives the child's output as it comes (after
// it ends). `keepGoing` false: the child is killed (cancel). Never throws for what the kernel does.
UserKernelJobResult runUserKernelJob(const UserKernelJob& job, const std::function<void(const std::string&)>& progress,
                                     const std::function<bool()>& keepGoing = {});

// The whole result for other programs: what `kernel check --json` writes (the schema:
// docs/your-kernel.md, "kernel check --json").
nlohmann::json userKernelResultToJson(const UserKernelJob& job, const UserKernelJobResult& result);

}  // namespace convscope
