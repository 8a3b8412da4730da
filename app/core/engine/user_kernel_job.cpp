#include "app/core/engine/user_kernel_job.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/core/conv/conv_check.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/conv_pixel.h"
#include "app/core/engine/network_predictions.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/child_process.h"
#include "app/core/util/data_dir.h"
#include "app/core/util/error.h"
#include "app/core/util/hashing.h"
#include "app/core/util/memory_limit.h"

namespace convscope {
namespace {

using nlohmann::json;

// The child's last "error: ..." line, or its last line: what a dying process said last.
std::string lastWords(const std::string& output) {
  std::istringstream in(output);
  std::string last, error;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("error: ", 0) == 0) error = line.substr(7);
  }
  return error.empty() ? last : error;
}

// A seed nobody can predict: the system's random source, never the clock.
uint64_t freshSeed() {
  uint64_t seed = 0;
  while (seed == 0) seed = secureRandom64();
  return seed;
}

// The child's seeds, in a file only this user can read: a command line is public (`ps`).
std::filesystem::path writeSecrets(const std::filesystem::path& folder, const std::string& name, const json& secrets) {
  const std::filesystem::path file = folder / (name + ".secrets.json");
  writePrivateFile(file, secrets.dump());
  return file;
}

// The model the network pass and the timing run: the job's, else the course's (the CLI's default).
std::filesystem::path modelOf(const UserKernelJob& job) {
  return job.model.empty() ? std::filesystem::path(shippedModelsDir()) / "course-high.onnx" : job.model;
}

int64_t childMemoryLimitBytes(const UserKernelJob& job) {
  return job.memoryLimitBytes > 0 ? job.memoryLimitBytes : memoryLimit().bytes + 2'000'000'000;
}

// One run of `convscope-cli kernel run-isolated` and what came back of it.
struct ChildRun {
  ChildOutcome child;
  json result = json::object();  // its --json file; empty when it wrote none or a broken one
  KernelOutput kernelOutput;
};

// `secrets`: the seeds, passed in a private file. `keepOutput`: what the kernel prints is kept
// (the check); elsewhere it goes to /dev/null, which the kernel cannot tell from a file.
ChildRun runIsolatedChild(const UserKernelJob& job, const SubmittedKernel& kernel, const std::filesystem::path& folder,
                          const std::string& name, const std::vector<std::string>& taskArguments, const json& secrets,
                          bool keepOutput, const std::function<bool()>& keepGoing) {
  const std::filesystem::path out = folder / (name + ".json");
  // The kernel's own output (printf, assert) goes to a file of its own, read back capped.
  const std::filesystem::path kernelOutputFile = keepOutput ? folder / (name + ".kernel-output") : "/dev/null";
  std::vector<std::string> argv = {job.program.string(),
                                   "kernel",
                                   "run-isolated",
                                   kernel.studentFile,
                                   "--compiled",
                                   kernel.folder.string(),
                                   "--secrets",
                                   writeSecrets(folder, name, secrets).string(),
                                   "--json",
                                   out.string(),
                                   "--kernel-output",
                                   kernelOutputFile.string(),
                                   "--outputs",
                                   folder.string()};
  argv.insert(argv.end(), {"--model", modelOf(job).string()});
  if (!job.data.empty()) argv.insert(argv.end(), {"--data", job.data.string()});
  argv.insert(argv.end(), taskArguments.begin(), taskArguments.end());
  ChildRun run;
  run.child = runChildProcess(argv, job.timeLimitSeconds, keepGoing, childMemoryLimitBytes(job));
  if (std::ifstream in(out); in) {
    try {
      in >> run.result;
    } catch (const json::exception&) {
      run.result = json::object();  // the child died while writing it
    }
  }
  if (!run.result.is_object()) run.result = json::object();
  if (keepOutput) run.kernelOutput = readKernelOutput(kernelOutputFile);
  return run;
}

}  // namespace

std::vector<ConvProblem> checkShapesOf(const UserKernelJob& job, uint64_t seed) {
  return checkShapes(seed, job.shapes, modelConvProblems(*loadOnnxModel(modelOf(job))));
}

UserKernelJobResult runUserKernelJob(const UserKernelJob& job, const std::function<void(const std::string&)>& progress,
                                     const std::function<bool()>& keepGoing) {
  UserKernelJobResult result;
  const uint64_t seed = job.seed != 0 ? job.seed : freshSeed();
  result.seed = seed;
  // The kernel read and compiled once (the job's, or submitted here).
  std::shared_ptr<const SubmittedKernel> kernel = job.kernel;
  if (!kernel) {
    try {
      SubmittedKernelOptions options;
      options.program = job.program;
      kernel = submitKernel(job.file, job.file.string(), options, keepGoing);
    } catch (const std::exception& e) {
      result.stage = "compile";
      result.failure = e.what();
      result.report = result.failure + "\n";
      return result;
    }
  }
  // Every message about the kernel names the student's file as they gave it.
  const std::string studentFile = kernel->studentFile;
  const std::string file = std::filesystem::path(studentFile).filename().string();
  if (!kernel->ok()) {
    result.stage = "compile";
    result.failure = kernel->compiled.errorText();
    while (!result.failure.empty() && result.failure.back() == '\n') result.failure.pop_back();
    result.report = file + ": compile FAILED\n" + kernel->compiled.errorText();
    return result;
  }
  // The job's folder: the child's result, the kernel's output and its raw outputs go there.
  const std::filesystem::path folder = makePrivateFolder("convscope-kernel-");

  // Runs one child and says what became of it in `result`: false when it did not finish its task.
  json j = json::object();
  const auto runChild = [&](const std::string& name, const std::vector<std::string>& taskArguments,
                            const json& secrets = json::object()) {
    ChildRun run = runIsolatedChild(job, *kernel, folder, name, taskArguments, secrets, name == "check", keepGoing);
    const ChildOutcome& child = run.child;
    j = run.result;
    // The check's output is the one shown; a later pass (its output discarded) adds none.
    if (run.kernelOutput.totalLines > 0 || result.kernelOutput.totalLines == 0) result.kernelOutput = run.kernelOutput;
    result.stage = j.value("stage", std::string("start"));
    // CUDA writes a failed device-side assert's message to stderr (seen on an H200, CUDA 13), not
    // through printf's buffer: the child's own output is searched too.
    const std::string diagnosis = run.kernelOutput.textForDiagnosis() + child.output;
    const auto explain = [&](const std::string& error) { return explainKernelFault(error, diagnosis, studentFile); };
    // The child's own lines, its "error: ..." (CUDA's words after a ConvScope path) said in the
    // student's terms too: the window and the CLI show them.
    std::string childLines;
    {
      std::istringstream in(child.output);
      for (std::string line; std::getline(in, line);)
        childLines += (line.rfind("error: ", 0) == 0 ? "error: " + explain(line.substr(7)) : line) + "\n";
    }
    result.childOutput += childLines;
    if (progress) progress(childLines);

    if (child.timedOut) {
      result.processDied = true;
      result.failure = studentFile + ": time limit: the kernel did not finish within " +
                       std::to_string(static_cast<int>(job.timeLimitSeconds)) +
                       " s (an endless loop?), so its process was stopped (during the " + result.stage + " step)";
      // A kernel that prints runs its printf in every pass (the one module is checked and timed),
      // and a line for each output of 10,000 images takes minutes: the likelier cause, said.
      if (result.kernelOutput.totalLines > 0)
        result.failure += "; it printed " + std::to_string(result.kernelOutput.totalLines) +
                          " line(s) in the check, and printf runs in every pass: a line for each output "
                          "of the network's 10,000 images takes minutes, so take the printf out";
    } else if (child.overMemory) {
      result.processDied = true;
      result.failure = studentFile + ": memory limit: its process held more than " +
                       std::to_string(child.memoryLimitBytes / 1000000) +
                       " MB of host memory, so it was stopped (during the " + result.stage + " step)";
    } else if (child.cancelled) {
      result.failure = "cancelled";
    } else if (!child.started) {
      result.failure = "could not start " + job.program.string() + ": " + child.output;
    } else if (child.signal != 0) {
      result.processDied = true;
      result.failure = explain(lastWords(child.output)) + " (its process was " + child.describe(job.timeLimitSeconds) +
                       " during the " + result.stage + " step)";
    } else if (j.contains("error")) {
      // A kernel that broke the GPU context ended its process, whichever call noticed first.
      const std::string fault = j.value("deviceFault", std::string());
      const std::string error = j["error"].get<std::string>();
      result.processDied =
          !fault.empty() || error.find("CUDA") != std::string::npos || error.find("cuda") != std::string::npos;
      result.failure = result.stage == "compile" ? error
                       : fault.empty() || error.find(fault) != std::string::npos
                           ? explain(error)
                           : explain(error + " (the GPU context: " + fault + ")");
    } else if (j.empty()) {
      result.processDied = true;
      result.failure = explain(lastWords(child.output)) + " (its process " + child.describe(job.timeLimitSeconds) +
                       " without a result)";
    } else if (!child.succeeded()) {
      result.failure = explain(lastWords(child.output)) + " (its process " + child.describe(job.timeLimitSeconds) + ")";
    }
    return result.failure.empty();
  };

  bool finished = false;
  if (job.task == UserKernelJob::Task::Check) {
    // The child runs the kernel and writes its raw outputs; this process, which never runs the
    // student's code, regenerates the inputs and compares (conv_check.h).
    // The model's own layers join the random shapes (conv_check.h); its file is the grader's, so a
    // model that cannot be read is said before the kernel runs.
    std::vector<ConvProblem> shapes;
    try {
      shapes = checkShapesOf(job, seed);
    } catch (const std::exception& e) {
      result.stage = "check";
      result.failure = e.what();
    }
    const bool ran = !shapes.empty() &&
                     runChild("check", {"--task", "check", "--shapes", std::to_string(job.shapes)},
                              {{"seed", std::to_string(seed)}}) &&
                     j.value("ran", false);
    std::vector<std::string> declined(shapes.size());
    const json reasons = j.value("declined", json::array());
    for (size_t i = 0; i < shapes.size() && i < reasons.size(); ++i)
      if (reasons[i].is_string()) declined[i] = reasons[i].get<std::string>();
    // The shapes [0, reached) against the reference, into `result`; the rest stay "not run".
    const auto compare = [&](size_t reached) {
      const ConvCheckResult check = compareCheckOutputs(
          std::vector<ConvProblem>(shapes.begin(), shapes.begin() + reached), seed, declined,
          [&](size_t index) { return readCheckOutput(checkOutputFile(folder, index), shapes[index]); });
      result.summary = check.summary();
      result.shapesChecked = static_cast<int>(check.checked.size());
      result.shapes.clear();
      for (const ConvShapeOutcome& o : check.outcomes)
        result.shapes.push_back({o.problem.describe(), o.name(), o.reason});
      for (size_t s = reached; s < shapes.size(); ++s) result.shapes.push_back({shapes[s].describe(), "not run", {}});
      result.failureMap = check.failure;
      if (check.firstWrong) {
        const ConvMismatch& w = *check.firstWrong;
        result.firstWrongN = w.n;
        result.firstWrongM = w.m;
        result.firstWrongH = w.h;
        result.firstWrongW = w.w;
        result.expected = w.expected;
        result.got = w.got;
        result.firstWrong = result.summary;
        result.failure = studentFile + ": wrong results: " + result.summary;
      } else if (!check.passed()) {
        result.failure = studentFile + ": " + result.summary;
      }
      return check.passed();
    };
    if (ran) {
      try {
        const bool passed = compare(shapes.size());
        // The network pass, in a child of its own: it writes predictions, this process counts them.
        if (passed && !job.network) finished = true;
        if (passed && job.network && runChild("network", {"--task", "network"}) && j.contains("network")) {
          const json& n = j["network"];
          const ImageSet labelled = ImageSet::loadIdxFolder(job.data.empty() ? defaultDataFolder() : job.data);
          const PredictionScore score =
              scorePredictions(readPredictions(networkPredictionsFile(folder), labelled.count()), labelled);
          result.accuracy = score.accuracy();
          if (const auto card = readModelCard(modelOf(job)); card && score.labelled > 0)
            result.courseAccuracy = static_cast<double>(card->testCorrect) / score.labelled;
          for (const json& f : n.value("fallbacks", json::array())) result.fallbacks.push_back(f.get<std::string>());
          finished = true;
        }
      } catch (const std::exception& e) {
        result.failure = e.what();  // a missing or wrong-sized file, named
      }
    } else if (result.stage == "check" && j.contains("reached") && result.failure != "cancelled") {
      // The kernel's process ended (a fault, the time limit) after some shapes: a wrong one among
      // them is the student's first mistake, as when one process ran the shapes in order and
      // stopped at the first wrong one, before the shape that faulted.
      const size_t reached = std::min<size_t>(j["reached"].get<size_t>(), shapes.size());
      const UserKernelJobResult died = result;
      try {
        if (compare(reached) || !result.firstWrong)
          result = died;
        else
          result.processDied = false;
      } catch (const std::exception&) {
        result = died;  // the fault's message stands
      }
    }
  } else if (job.task == UserKernelJob::Task::Timing) {
    // The positions checked after each repetition come from this seed, which only the child's host
    // code sees; the inputs of each repetition from `seed`.
    const uint64_t sampleSeed = job.timingSampleSeed != 0 ? job.timingSampleSeed : freshSeed();
    std::vector<std::string> arguments = {"--task",    "timing",
                                          "--samples", std::to_string(job.timingSamples),
                                          "--repeats", std::to_string(job.repeats),
                                          "--warmups", std::to_string(job.warmups),
                                          "--batches"};
    for (int b : job.batches) arguments.push_back(std::to_string(b));
    if (runChild("timing", arguments, {{"seed", std::to_string(seed)}, {"sample_seed", std::to_string(sampleSeed)}}) &&
        j.contains("timing")) {
      try {
        const json d = j.value("device", json::object());
        result.timingDevice = {d.value("name", std::string()),   d.value("compute_capability", std::string()),
                               d.value("driver", std::string()), d.value("runtime", std::string()),
                               d.value("sm_clock_mhz", 0),       d.value("memory_clock_mhz", 0)};
        const std::optional<DevicePeaks> peaks = devicePeaksFromJson(d);
        for (const json& l : j["timing"].at("layers")) {
          UserKernelJobResult::LayerTiming timed;
          timed.batch = l.at("batch").get<int>();
          timed.timing.node = l.value("node", std::string());
          timed.timing.problem = convProblemFromJson(l.at("problem"));
          if (l.contains("declined")) {
            result.fallbacks.push_back(timed.timing.problem.describe() + ": " + l["declined"].get<std::string>());
            continue;
          }
          const std::vector<TimedRepetition> repetitions = timedRepetitionsFromJson(l.at("repetitions"));
          judgeLayerTiming(timed.timing, repetitions, sampleSeed, job.timingSamples, peaks, studentFile);
          // The inputs were the ones this process asked for, every repetition of them.
          bool asked = static_cast<int>(repetitions.size()) == job.repeats;
          for (size_t r = 0; asked && r < repetitions.size(); ++r)
            asked = repetitions[r].repetition == static_cast<int>(r) &&
                    repetitions[r].inputSeed == repetitionInputSeed(seed, l.at("layer").get<int>(),
                                                                    timed.timing.problem.batch, static_cast<int>(r));
          if (!asked && timed.timing.rejected.empty())
            timed.timing.rejected = studentFile + ": the timing of " + timed.timing.problem.describe() +
                                    " did not come back for the inputs asked for: not accepted";
          if (!timed.timing.rejected.empty() && result.failure.empty()) result.failure = timed.timing.rejected;
          result.timings.push_back(std::move(timed));
        }
        finished = true;
      } catch (const std::exception& e) {
        result.failure = std::string("the timing's result could not be read: ") + e.what();
      }
    }
  } else {
    std::vector<std::string> arguments = {
        "--task",   "bench", "--repeats", std::to_string(job.repeats), "--warmups", std::to_string(job.warmups),
        "--batches"};
    for (int b : job.batches) arguments.push_back(std::to_string(b));
    if (runChild("bench", arguments) && j.contains("benchmark")) {
      try {
        result.benchmark = readBenchmarkJson(j["benchmark"].get<std::string>());
        finished = true;
      } catch (const std::exception& e) {
        result.failure = std::string("the benchmark's result could not be read: ") + e.what();
      }
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  result.passed = finished && result.failure.empty();

  std::ostringstream report;
  if (job.task == UserKernelJob::Task::Check) {
    report << file << ": check " << (result.passed ? "PASSED" : "FAILED") << "\n";
    if (!result.summary.empty()) report << "  " << result.summary << "\n";
    if (result.failureMap) {
      std::istringstream lines(result.failureMap->text());
      for (std::string line; std::getline(lines, line);) report << "  " << line << "\n";
      report << "  (the same shape again: --seed " << result.seed << ")\n";
    }
    if (result.accuracy) {
      report.precision(4);
      report << std::fixed << "  network on the test set: accuracy " << *result.accuracy * 100 << "%";
      if (result.courseAccuracy) report << " (the course's FP32 variants: " << *result.courseAccuracy * 100 << "%)";
      report << "\n";
    }
    for (const std::string& f : result.fallbacks) report << "  fallback: " << f << "\n";
  } else {
    report << file << ": timing " << (result.passed ? "done" : "FAILED") << "\n";
    if (!result.timingDevice.name.empty())
      report << "  on " << result.timingDevice.name << " (compute " << result.timingDevice.computeCapability
             << ", driver " << result.timingDevice.driver << ", runtime " << result.timingDevice.runtime << ", clocks "
             << result.timingDevice.smClockMHz << " MHz SM, " << result.timingDevice.memoryClockMHz << " MHz memory)\n";
    report.precision(4);
    for (const UserKernelJobResult::LayerTiming& t : result.timings) {
      report << "  batch " << t.batch << ", " << t.timing.node << " (" << t.timing.problem.describe() << "): ";
      if (!t.timing.rejected.empty()) {
        report << "rejected\n";
        continue;
      }
      report << "median " << t.timing.time.median * 1e3 << " ms (min " << t.timing.time.min * 1e3 << ", max "
             << t.timing.time.max * 1e3 << ", " << t.timing.repetitions << " repetitions)";
      if (t.timing.belowPhysicalFloor)
        report << "; below the physical floor (" << t.timing.floorSeconds * 1e3 << " ms): flagged for review";
      report << "\n";
    }
    for (const std::string& f : result.fallbacks) report << "  not timed: " << f << "\n";
  }
  if (!result.failure.empty() && !result.firstWrong) report << "  " << result.failure << "\n";
  if (result.processDied) report << "  (the kernel ran in a process of its own; ConvScope goes on)\n";
  if (result.kernelOutput.totalLines > 0) {
    report << "\nThe kernel printed " << result.kernelOutput.totalLines << " line(s)"
           << (result.kernelOutput.truncated() ? ", the first " + std::to_string(result.kernelOutput.lines.size()) +
                                                     " shown (what the network pass and the timing print is not kept)"
                                               : std::string())
           << ":\n";
    for (const std::string& line : result.kernelOutput.lines) report << "  | " << line << "\n";
  }
  result.report = report.str();
  return result;
}

json userKernelResultToJson(const UserKernelJob& job, const UserKernelJobResult& result) {
  json shapes = json::array();
  for (const UserKernelJobResult::Shape& s : result.shapes) {
    json shape = {{"shape", s.shape}, {"outcome", s.outcome}};
    if (!s.reason.empty()) shape["reason"] = s.reason;
    shapes.push_back(shape);
  }
  json j = {{"schema", "convscope-kernel-check/1"},
            {"file", job.kernel ? job.kernel->studentFile : job.file.string()},
            {"task", job.task == UserKernelJob::Task::Check ? "check" : "bench"},
            {"status", result.passed ? "passed" : "failed"},
            {"stage", result.stage},
            {"failure", result.failure.empty() ? json(nullptr) : json(result.failure)},
            {"processDied", result.processDied},
            {"seed", result.seed},
            {"summary", result.summary},
            {"shapesChecked", result.shapesChecked},
            {"shapes", shapes},
            {"failingMap", result.failureMap ? failureMapToJson(*result.failureMap) : json(nullptr)},
            {"kernelOutput",
             {{"lines", result.kernelOutput.lines},
              {"totalLines", result.kernelOutput.totalLines},
              {"truncated", result.kernelOutput.truncated()}}}};
  if (job.task == UserKernelJob::Task::Timing) {
    json layers = json::array();
    for (const UserKernelJobResult::LayerTiming& t : result.timings)
      layers.push_back(fairLayerTimingToJson(t.timing, t.batch));
    j["task"] = "timing";
    j["timing"] = {{"device",
                    {{"name", result.timingDevice.name},
                     {"compute_capability", result.timingDevice.computeCapability},
                     {"driver", result.timingDevice.driver},
                     {"runtime", result.timingDevice.runtime},
                     {"sm_clock_mhz", result.timingDevice.smClockMHz},
                     {"memory_clock_mhz", result.timingDevice.memoryClockMHz}}},
                   {"layers", layers}};
  }
  if (result.accuracy) {
    json network = {{"accuracy", *result.accuracy}, {"fallbacks", result.fallbacks}};
    network["courseAccuracy"] = result.courseAccuracy ? json(*result.courseAccuracy) : json(nullptr);
    j["network"] = network;
  } else {
    j["network"] = nullptr;
  }
  return j;
}

}  // namespace convscope
