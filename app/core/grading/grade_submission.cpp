#include "app/core/grading/grade_submission.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>

#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/fair_timer.h"
#include "app/core/engine/fair_timing.h"
#include "app/core/engine/submitted_kernel.h"
#include "app/core/engine/user_kernel_job.h"
#include "app/core/grading/class_leaderboard.h"
#include "app/core/grading/gpu_locks.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/error.h"
#include "app/core/util/hashing.h"
#include "app/core/util/json_file.h"

namespace convscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

FairTimingOutcome timeFairly(UserKernelJob job, const KeepGoing& keepGoing) {
  job.task = UserKernelJob::Task::Timing;
  job.batches = kGradeBatches;
  FairTimingOutcome timing;
  timing.result = runUserKernelJob(
      job, [](const std::string&) {}, keepGoing);
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
UserKernelJob gradingJob(const std::shared_ptr<const SubmittedKernel>& kernel, const GradingSettings& settings,
                         uint64_t seed) {
  UserKernelJob job;
  job.program = settings.program;
  job.kernel = kernel;
  job.shapes = kCheckShapes;
  job.seed = seed;
  job.network = true;
  job.model = settings.model;
  job.data = settings.data;
  job.timeLimitSeconds = settings.timeLimitSeconds;
  return job;
}

SubmittedKernelOptions compileOptions(const GradingSettings& settings) {
  SubmittedKernelOptions options;
  options.program = settings.program;
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

// A seed nobody can predict, drawn when a submission's grading starts: its check's shapes and
// values and its timing's inputs. It reaches the kernel's process in a private file, never on a
// command line (user_kernel_job.h), and is published in the result once the grading is over.
uint64_t freshGradingSeed() {
  uint64_t seed = 0;
  while (seed == 0) seed = secureRandom64();
  return seed;
}

}  // namespace

std::string sandboxWarning(const std::string& description) {
  return "warning: the compiler's sandbox, the second wall around a student's kernel, is missing on this machine (" +
         description + "): only the #include filter keeps a kernel from the machine's files";
}

json gradeSubmission(const fs::path& results, const Submission& s, const GradingSettings& settings, int gpuCount,
                     const GradingLog& log, const KeepGoing& keepGoing) {
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
  if (const std::string why = userKernelCompiler().unavailableReason(); !why.empty())
    return finish(kGradeNoCompiler, "not compiled on this grading machine: " + why);
  if (kernel->compilerFailure.empty()) {
    r["sandbox"] = sandboxJson(kernel->sandbox);
    if (!kernel->sandbox.enforced) log.warn(sandboxWarning(kernel->sandbox.describe()));
  } else if (!kernel->childDetail.empty()) {  // for the course staff, not in the student's message
    log.warn(s.id, ": the compiler's process ", kernel->compilerFailure, ": ", kernel->childDetail);
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
    timing = timeFairly(job, keepGoing);
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

void timeReferences(const fs::path& results, const GradingSettings& settings, const GradingLog& log,
                    const KeepGoing& keepGoing) {
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
  log.say("timing the course's ", options.variants.size(), " GPU variants for the reference lines");
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
    if (!keepGoing()) break;
    const ConvVariant& row = findConvVariant(id);
    json times = json::object();
    std::string declined;
    for (const auto& [batch, problems] : layers) {
      double sum = 0.0;
      for (size_t l = 0; l < problems.size() && declined.empty() && keepGoing(); ++l) {
        if (const std::string why = row.unsupportedReason ? row.unsupportedReason(problems[l]) : ""; !why.empty()) {
          declined = problems[l].describe() + ": " + why;
          break;
        }
        FairTimingPlan plan;
        plan.problem = problems[l];
        plan.layer = static_cast<int>(l);
        plan.runSeed = secureRandom64();
        plan.sampleSeed = secureRandom64();
        FairLayerTiming timed;
        timed.problem = problems[l];
        // A course variant is held to its own tolerance (TF32's products are rounded).
        judgeLayerTiming(timed, timeConvFairly(row, *device, plan), plan.sampleSeed, plan.sampleCount, peaks, id,
                         std::max(kUserKernelRelativeTolerance, row.relativeTolerance));
        if (!timed.rejected.empty()) {  // no reference line from it; the class is still graded
          declined = "failed its own timing: " + timed.rejected;
          log.warn("warning: the course's variant ", id, " ", declined);
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
  // Stopped part of the way: nothing written, so that the next grading times them all again
  // (a reference.json with these settings stands as current).
  if (!keepGoing()) return;
  writeFileAtomically(results / "reference.json", json({{"schema", kClassResultsSchema},
                                                        {"gpu", gpuJson()},
                                                        {"timedAt", nowIso()},
                                                        {"settings", settingsJson(settings)},
                                                        {"variants", variants}})
                                                          .dump(2) +
                                                      "\n");
}

bool referencesCurrent(const fs::path& results, const GradingSettings& settings) {
  const fs::path file = results / "reference.json";
  if (!fs::exists(file)) return false;
  try {
    const json reference = parseJsonText(readWholeFile(file), file.string());
    return reference.value("settings", json()) == settingsJson(settings);
  } catch (const std::exception&) {
    return false;
  }
}

void retimeTop(const fs::path& results, const GradingSettings& settings, int count, const GradingLog& log,
               const KeepGoing& keepGoing) {
  if (count <= 0) return;
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) {
    log.say("the top of the ranking is not re-timed: no GPU here (", gpu.unusableReason, ")");
    return;
  }
  const std::string batch = std::to_string(kGradeBatches.back());
  std::vector<std::string> top;
  for (const LeaderboardGroup& g : buildLeaderboard(results, false).groups)
    if (g.gpu == gpu.name)
      for (const json& row : g.rows)
        if (int(top.size()) < count && countsAsPassed(row["status"]) && row["opTimeSeconds"].contains(batch))
          top.push_back(row["id"]);
  if (top.empty()) return;
  if (settings.memoryLimitMb) ::setenv("CONVSCOPE_MEMORY_LIMIT_MB", std::to_string(*settings.memoryLimitMb).c_str(), 1);
  log.say("re-timing the top ", top.size(), " on ", gpu.name, " to confirm their order");
  json entries = json::array();
  for (auto id = top.rbegin(); id != top.rend() && keepGoing(); ++id) {
    const SubmissionSource source = submissionSource(results, *id);
    const fs::path resultPath = resultFile(results, *id);
    const json graded = parseJsonText(readWholeFile(resultPath), resultPath.string());
    const std::string studentFile = graded.value("file", source.file.filename().string());
    // Read once (never through a symbolic link) and compiled once, as when it was graded.
    std::shared_ptr<const SubmittedKernel> kernel;
    std::string notRetimed = source.problem;
    if (notRetimed.empty()) {
      try {
        kernel = submitKernel(source.file, studentFile, compileOptions(settings), keepGoing);
        if (kernel->contentHash != graded.value("contentHash", "")) notRetimed = "its file changed since it was graded";
      } catch (const Error& e) {
        notRetimed = e.what();
      }
    }
    if (!notRetimed.empty()) {
      log.say(*id, "  not re-timed: ", notRetimed);
      continue;
    }
    json entry = {{"id", *id}, {"contentHash", graded["contentHash"]}};
    FairTimingOutcome timing;
    if (kernel->ok())
      timing = timeFairly(gradingJob(kernel, settings, freshGradingSeed()), keepGoing);
    else
      timing.result.failure = kernel->compiled.errorText();
    std::string failure = timing.result.passed ? timing.belowFloor : timing.result.failure;
    if (timing.result.passed && !timing.belowFloor.empty()) failure += " (below the physical floor)";
    if (timing.result.passed && !timing.sums.count(kGradeBatches.back())) failure = "no time at batch " + batch;
    if (failure.empty()) {
      entry["seconds"] = timing.sums.at(kGradeBatches.back());
      log.say(*id, "  re-timed: ", entry["seconds"].get<double>() * 1e3, " ms (first ",
              graded["opTimeSeconds"][batch].get<double>() * 1e3, " ms)");
    } else {
      for (size_t at = failure.find(source.file.string()); at != std::string::npos;
           at = failure.find(source.file.string(), at))
        failure.replace(at, source.file.string().size(), studentFile);
      entry["failure"] = failure;
      log.say(*id, "  re-timing failed: ", failure);
    }
    entries.push_back(entry);
  }
  if (!keepGoing()) return;
  writeFileAtomically(results / kRetimeFileName, json({{"schema", kClassResultsSchema},
                                                       {"gpu", gpu.name},
                                                       {"batch", kGradeBatches.back()},
                                                       {"retimedAt", nowIso()},
                                                       {"submissions", entries}})
                                                         .dump(2) +
                                                     "\n");
}

}  // namespace convscope
