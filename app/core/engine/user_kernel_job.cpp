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
  // The kernel's own output (printf, assert) goes to a file of its own, read back capped.
  const std::filesystem::path kernelOutputFile = out.string() + ".kernel-output";
  std::vector<std::string> argv = {
      job.program.string(), "kernel",          "run-isolated",           job.file.string(), "--json",
      out.string(),         "--kernel-output", kernelOutputFile.string()};
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
  result.kernelOutput = readKernelOutput(kernelOutputFile);
  std::filesystem::remove(kernelOutputFile, ignored);
  result.seed = seed;
  result.stage = j.value("stage", std::string("start"));
  const std::string file = job.file.filename().string();
  // Every message about the kernel names the student's file as they gave it.
  const std::string studentFile = job.file.string();
  // CUDA writes a failed device-side assert's message to stderr (seen on an H200, CUDA 13), not
  // through printf's buffer: the child's own output is searched too.
  const std::string diagnosis = result.kernelOutput.textForDiagnosis() + child.output;
  const auto explain = [&](const std::string& error) { return explainKernelFault(error, diagnosis, studentFile); };
  // The child's own lines, its "error: ..." (CUDA's words after a ConvScope path) said in the
  // student's terms too: the window and the CLI show them.
  {
    std::istringstream in(child.output);
    for (std::string line; std::getline(in, line);)
      result.childOutput += (line.rfind("error: ", 0) == 0 ? "error: " + explain(line.substr(7)) : line) + "\n";
  }
  if (progress) progress(result.childOutput);

  if (child.timedOut) {
    result.processDied = true;
    result.failure = studentFile + ": time limit: the kernel did not finish within " +
                     std::to_string(static_cast<int>(job.timeLimitSeconds)) +
                     " s (an endless loop?), so its process was stopped (during the " + result.stage + " step)";
  } else if (child.cancelled) {
    result.failure = "cancelled";
  } else if (!child.started) {
    result.failure = "could not start " + job.program.string() + ": " + child.output;
  } else if (child.signal != 0) {
    result.processDied = true;
    result.failure = explain(lastWords(child.output)) + " (its process was " + child.describe(job.timeLimitSeconds) +
                     " during the " + result.stage + " step)";
  } else if (j.contains("error")) {
    const std::string error = j["error"].get<std::string>();
    result.processDied = error.find("CUDA") != std::string::npos || error.find("cuda") != std::string::npos;
    result.failure = result.stage == "compile" ? error : explain(error);
  } else if (j.empty()) {
    result.processDied = true;
    result.failure = explain(lastWords(child.output)) + " (its process " + child.describe(job.timeLimitSeconds) +
                     " without a result)";
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
    if (result.failure.empty()) result.failure = studentFile + ": wrong results: " + result.summary;
  }
  if (j.contains("failure")) {
    try {
      result.failureMap = failureMapFromJson(j["failure"]);
    } catch (const json::exception&) {
      result.failureMap.reset();  // a broken map: the one line above still says what failed
    }
  }
  for (const json& s : j.value("shapes", json::array()))
    result.shapes.push_back(
        {s.value("shape", std::string()), s.value("outcome", std::string()), s.value("reason", std::string())});
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
  }
  if (!result.failure.empty() && !result.firstWrong) report << "  " << result.failure << "\n";
  if (result.processDied) report << "  (the kernel ran in a process of its own; ConvScope goes on)\n";
  if (result.kernelOutput.totalLines > 0) {
    report << "\nThe kernel printed " << result.kernelOutput.totalLines << " line(s)"
           << (result.kernelOutput.truncated() ? ", the first " + std::to_string(result.kernelOutput.lines.size()) +
                                                     " shown (the network pass and the timing run without printf)"
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
            {"file", job.file.string()},
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
