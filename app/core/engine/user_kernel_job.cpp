#include "app/core/engine/user_kernel_job.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/core/util/child_process.h"

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

// Why a CUDA error happened, in the student's words.
std::string explainCudaError(const std::string& message) {
  if (message.find("illegal memory access") != std::string::npos ||
      message.find("illegal address") != std::string::npos)
    return "the kernel read or wrote outside its buffers (illegal memory access): " + message;
  if (message.find("misaligned") != std::string::npos) return "the kernel made a misaligned access: " + message;
  if (message.find("too many resources") != std::string::npos ||
      message.find("invalid configuration") != std::string::npos)
    return "the launch geometry (CONVSCOPE_BLOCK_X x CONVSCOPE_BLOCK_Y, shared memory) does not fit the GPU: " +
           message;
  return message;
}

std::filesystem::path resultPath() {
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::filesystem::temp_directory_path() /
         ("convscope-kernel-" + std::to_string(getpid()) + "-" + std::to_string(stamp) + ".json");
}

}  // namespace

UserKernelJobResult runUserKernelJob(const UserKernelJob& job, const std::function<void(const std::string&)>& progress,
                                     const std::function<bool()>& keepGoing) {
  UserKernelJobResult result;
  const std::filesystem::path out = resultPath();
  const uint64_t seed =
      job.seed != 0 ? job.seed : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::vector<std::string> argv = {job.program.string(), "kernel", "run-isolated",
                                   job.file.string(),    "--json", out.string()};
  if (!job.model.empty()) argv.insert(argv.end(), {"--model", job.model.string()});
  if (!job.data.empty()) argv.insert(argv.end(), {"--data", job.data.string()});
  if (job.task == UserKernelJob::Task::Check) {
    argv.insert(argv.end(),
                {"--task", "check", "--shapes", std::to_string(job.shapes), "--seed", std::to_string(seed)});
    if (!job.network) argv.push_back("--no-network");
  } else {
    argv.insert(argv.end(), {"--task", "bench", "--repeats", std::to_string(job.repeats), "--warmups",
                             std::to_string(job.warmups), "--batches"});
    for (int b : job.batches) argv.push_back(std::to_string(b));
  }

  const ChildOutcome child = runChildProcess(argv, job.timeLimitSeconds, keepGoing);
  result.childOutput = child.output;
  if (progress) progress(child.output);

  // No file (the child was stopped before it wrote one) or a broken one: an empty result.
  json j = json::object();
  if (std::ifstream in(out); in) {
    try {
      in >> j;
    } catch (const json::exception&) {
      j = json::object();  // the child died while writing it
    }
  }
  if (!j.is_object()) j = json::object();
  std::error_code ignored;
  std::filesystem::remove(out, ignored);
  result.stage = j.value("stage", std::string("start"));
  const std::string file = job.file.filename().string();

  if (child.timedOut) {
    result.processDied = true;
    result.failure = "time limit: the kernel did not finish within " +
                     std::to_string(static_cast<int>(job.timeLimitSeconds)) +
                     " s (an endless loop?), so its process was stopped (during the " + result.stage + " step)";
  } else if (child.cancelled) {
    result.failure = "cancelled";
  } else if (!child.started) {
    result.failure = "could not start " + job.program.string() + ": " + child.output;
  } else if (child.signal != 0) {
    result.processDied = true;
    result.failure = "the kernel's process was " + child.describe(job.timeLimitSeconds) + " during the " +
                     result.stage + " step: " + lastWords(child.output);
  } else if (j.contains("error")) {
    const std::string error = j["error"].get<std::string>();
    result.processDied = error.find("CUDA") != std::string::npos || error.find("cuda") != std::string::npos;
    result.failure = result.stage == "compile" ? error : explainCudaError(error);
  } else if (j.empty()) {
    result.processDied = true;
    result.failure = "the kernel's process " + child.describe(job.timeLimitSeconds) +
                     " without a result: " + lastWords(child.output);
  }

  result.summary = j.value("summary", std::string());
  result.shapesChecked = j.value("shapesChecked", 0);
  if (j.contains("firstWrong")) {
    const json& w = j["firstWrong"];
    result.firstWrongN = w.value("n", -1);
    result.firstWrongM = w.value("m", -1);
    result.firstWrongH = w.value("h", -1);
    result.firstWrongW = w.value("w", -1);
    result.expected = w.value("expected", 0.0);
    result.got = w.contains("got") && w["got"].is_number() ? w["got"].get<double>() : std::nan("");
    result.firstWrong = result.summary;
    if (result.failure.empty()) result.failure = "wrong results: " + result.summary;
  }
  if (j.contains("network")) {
    const json& n = j["network"];
    result.accuracy = n.value("accuracy", 0.0);
    if (n.contains("courseCorrect") && n.value("labelled", 0) > 0)
      result.courseAccuracy = n["courseCorrect"].get<double>() / n["labelled"].get<double>();
    for (const json& f : n.value("fallbacks", json::array())) result.fallbacks.push_back(f.get<std::string>());
  }
  if (j.contains("benchmark")) {
    try {
      result.benchmark = readBenchmarkJson(j["benchmark"].get<std::string>());
    } catch (const std::exception& e) {
      result.failure = std::string("the benchmark's result could not be read: ") + e.what();
    }
    std::filesystem::remove(j["benchmark"].get<std::string>(), ignored);
  }
  result.passed = result.failure.empty() && child.succeeded() && result.stage == "done";
  if (job.task == UserKernelJob::Task::Check && !job.network && result.failure.empty() && child.succeeded())
    result.passed = j.value("passed", false);

  std::ostringstream report;
  if (job.task == UserKernelJob::Task::Check) {
    report << file << ": check " << (result.passed ? "PASSED" : "FAILED") << "\n";
    if (!result.summary.empty()) report << "  " << result.summary << "\n";
    if (result.accuracy) {
      report.precision(4);
      report << std::fixed << "  network on the test set: accuracy " << *result.accuracy * 100 << "%";
      if (result.courseAccuracy) report << " (the course's FP32 variants: " << *result.courseAccuracy * 100 << "%)";
      report << "\n";
    }
    for (const std::string& f : result.fallbacks) report << "  fallback: " << f << "\n";
  } else {
    report << file << ": timing " << (result.passed ? "done" : "FAILED") << "\n";
  }
  if (!result.failure.empty() && !result.firstWrong) report << "  " << result.failure << "\n";
  if (result.processDied) report << "  (the kernel ran in a process of its own; ConvScope goes on)\n";
  result.report = report.str();
  return result;
}

}  // namespace convscope
