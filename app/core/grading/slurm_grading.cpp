#include "app/core/grading/slurm_grading.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <thread>

#include "app/core/grading/class_leaderboard.h"
#include "app/core/grading/grade_class.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/child_process.h"
#include "app/core/util/error.h"
#include "app/core/util/json_file.h"

namespace convscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

// Why the --time of a task is what it is: a task compiles (a time limit), checks, runs the test
// set and times (a time limit each), and the three dominate; two minutes more for the CUDA
// context, the model and the data; in minutes, rounded up. The merge job adds half an hour for
// the course's reference timings and the re-timing of the top.
int taskMinutesFor(const GradingSettings& settings) {
  return (3 * settings.timeLimitSeconds + 120) / 60 + 1;
}

std::string sbatchHeader(const SlurmOptions& o, const std::string& name, const std::string& output, int minutes) {
  std::string header = "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --output=" + output +
                       "\n#SBATCH --time=" + std::to_string(minutes) + "\n";
  if (o.partition) header += "#SBATCH --partition=" + *o.partition + "\n";
  if (o.gres) header += "#SBATCH --gres=" + *o.gres + "\n";
  for (const std::string& arg : o.sbatchArgs) header += "#SBATCH " + arg + "\n";
  return header;
}

std::string prologLines(const SlurmOptions& o) {
  std::string lines;
  for (const std::string& line : o.prolog) lines += line + "\n";
  return lines;
}

// Which tasks failed (a manifest line without a result), each with its array index, its log and
// the commands that grade it again here and merge; the logs' folder when none can be told.
std::string failedTasksMessage(const fs::path& dir, const fs::path& results, const std::vector<std::string>& ids,
                               const std::string& arrayId, const std::string& mergeId, const GradingSettings& settings,
                               fs::file_time_type submittedAt) {
  std::string message = "a grading task of array job " + arrayId + " failed, so merge job " + mergeId +
                        " can never run (it was cancelled).";
  std::string options;
  for (const std::string& option : settingsOptions(settings)) options += " " + shellQuote(option);
  int named = 0;
  for (size_t index = 0; index < ids.size(); ++index) {
    const fs::path file = resultFile(results, ids[index]);
    std::error_code error;
    if (fs::exists(file) && fs::last_write_time(file, error) >= submittedAt && !error) continue;  // graded now
    message += "\n  task " + std::to_string(index) + ": " + ids[index] + ", log " +
               (results / "slurm" / "logs" / ("grade_" + arrayId + "_" + std::to_string(index) + ".out")).string() +
               "; grade it again here: " +
               commandLine({settings.program, "grade", fs::absolute(dir).string(), "--out", results.string(), "--only",
                            ids[index]}) +
               options;
    ++named;
  }
  if (named == 0) message += " The tasks' logs: " + (results / "slurm" / "logs").string();
  return message + "\nthen: " + commandLine({settings.program, "grade", "merge", results.string()});
}

}  // namespace

std::string scriptLine(const std::string& option, const std::string& value, bool sbatchOption) {
  if (value.find_first_of("\n\r") != std::string::npos)
    throw Error("grade: " + option + " '" + value + "': one line, please (a line break would end the script's line)");
  if (!sbatchOption) return value;
  const std::string name = value.substr(0, value.find('='));
  const bool isName = !name.empty() && std::islower(static_cast<unsigned char>(name[0])) &&
                      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string::npos;
  if (!isName)
    throw Error("grade: " + option + " '" + value +
                "': an sbatch option's long name and value without the dashes, such as account=course42");
  // sbatch splits an #SBATCH line at blanks: a value with one would become other options.
  if (value.find_first_of(" \t") != std::string::npos)
    throw Error("grade: " + option + " '" + value +
                "': no blanks in an sbatch option (give each as its own NAME=VALUE)");
  return "--" + value;
}

void gradeOnSlurm(const fs::path& dir, const fs::path& results, const SubmissionFolder& found,
                  const GradingSettings& settings, const SlurmOptions& o, bool anonymize, const GradingLog& log) {
  if (found.submissions.empty()) throw Error(dir.string() + ": no submissions to grade (no .cu files)");
  const fs::path slurm = results / "slurm";
  // Only what is new or changed since its last grading goes to the cluster (after a deadline's
  // extension, a few files, not the class).
  std::vector<std::string> ids;
  const json current = settingsJson(settings);
  for (const Submission& s : found.submissions)
    if (!keptResult(results, s, current)) ids.push_back(s.id);
  std::string manifest;
  for (const std::string& id : ids) manifest += id + "\n";
  const int taskMinutes = taskMinutesFor(settings);
  const std::string program = settings.program;
  std::vector<std::string> task = {program, "grade", fs::absolute(dir).string(), "--out", results.string(), "--only"};
  std::string gradeLine = commandLine(task) + " \"$id\"";
  for (const std::string& option : settingsOptions(settings)) {
    gradeLine += ' ';
    gradeLine += shellQuote(option);
  }
  const std::string arrayScript =
      sbatchHeader(o, "convscope-grade", (slurm / "logs" / "grade_%A_%a.out").string(), taskMinutes) +
      "#SBATCH --array=0-" + std::to_string(std::max<size_t>(ids.size(), 1) - 1) + "%" + std::to_string(o.maxParallel) +
      "\n# One task per new or changed submission: the task's index is its line (from 0) in the manifest.\n"
      "# Each task draws its own seed when its grading starts: no seed is written here.\nset -euo pipefail\n" +
      prologLines(o) + "id=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " +
      shellQuote((slurm / "manifest.txt").string()) + ")\n" + "exec " + gradeLine + "\n";
  std::vector<std::string> mergeArgv = {
      program, "grade", "merge", results.string(), "--time-references", "--retime-top", std::to_string(o.retimeCount)};
  mergeArgv.push_back(anonymize ? "--anonymize" : "--no-anonymize");
  // A GPU was asked for: a class where no task got one is the grader's failure, not a result.
  if (o.gres) mergeArgv.push_back("--expect-gpu");
  for (const std::string& option : settingsOptions(settings)) mergeArgv.push_back(option);
  const auto mergeScript = [&](const std::string& dependency) {
    return sbatchHeader(o, "convscope-grade-merge", (slurm / "logs" / "merge_%j.out").string(), taskMinutes + 30) +
           (dependency.empty() ? "" : "#SBATCH --dependency=afterok:" + dependency + "\n") + "set -euo pipefail\n" +
           prologLines(o) + "exec " + commandLine(mergeArgv) + "\n";
  };
  if (o.dryRun) {
    // Printed only: no file written, no seed drawn, nothing of an earlier run touched.
    log.say("# ", (slurm / "manifest.txt").string(), " (not written: --dry-run; ", ids.size(), " of ",
            found.submissions.size(), " submissions new or changed)\n", manifest);
    if (!ids.empty())
      log.say("\n# ", (slurm / "grade-array.sbatch").string(), " (not submitted: --dry-run)\n", arrayScript);
    log.say("\n# ", (slurm / "grade-merge.sbatch").string(), " (not submitted: --dry-run",
            (ids.empty() ? "" : "; ARRAY_JOB_ID is the array's job id once submitted"), ")\n",
            mergeScript(ids.empty() ? "" : "ARRAY_JOB_ID"));
    return;
  }
  fs::create_directories(slurm / "logs");
  removeOldGradingRunRecord(results);
  writeFileAtomically(slurm / "manifest.txt", manifest);
  if (ids.empty()) {
    log.say("all ", found.submissions.size(),
            " submissions are unchanged since their grading: no task to submit; merging here");
    mergeClass(results, anonymize, log);
    return;
  }
  writeFileAtomically(slurm / "grade-array.sbatch", arrayScript);
  const fs::file_time_type submittedAt = fs::file_time_type::clock::now();
  const std::string arrayId =
      submittedJobId(slurmCommand({"sbatch", "--parsable", (slurm / "grade-array.sbatch").string()}));
  writeFileAtomically(slurm / "grade-merge.sbatch", mergeScript(arrayId));
  const std::string mergeId =
      submittedJobId(slurmCommand({"sbatch", "--parsable", (slurm / "grade-merge.sbatch").string()}));
  log.say("submitted array job ", arrayId, " (", ids.size(), " tasks, at most ", o.maxParallel,
          " at once) and merge job ", mergeId, " (afterok:", arrayId, ")");
  if (!o.wait) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.waitTimeoutSeconds);
  std::chrono::seconds pause(1);
  while (true) {
    const ChildOutcome queued =
        runChildProcess({findProgram("squeue").string(), "-h", "-j", mergeId, "-o", "%T %r"}, 60);
    const std::string state = queued.succeeded() ? queued.output : "";
    if (state.find("DependencyNeverSatisfied") != std::string::npos) {
      runChildProcess({findProgram("scancel").string(), mergeId}, 60);
      throw Error(failedTasksMessage(dir, results, ids, arrayId, mergeId, settings, submittedAt));
    }
    if (state.find_first_not_of(" \n") == std::string::npos) break;  // left the queue
    if (std::chrono::steady_clock::now() > deadline)
      throw Error("merge job " + mergeId + " still not done after " + std::to_string(o.waitTimeoutSeconds) +
                  " s; the jobs go on (squeue -j " + arrayId + "," + mergeId + ")");
    // Gently: a second at first, then up to 30 s between looks (a cluster's controller serves many).
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::seconds(30));
  }
  const std::string shown = slurmCommand({"scontrol", "show", "job", mergeId});
  if (shown.find("JobState=COMPLETED") == std::string::npos) {
    std::smatch m;
    std::regex_search(shown, m, std::regex(R"(JobState=\S+)"));
    throw Error("merge job " + mergeId + " ended " + m.str() + "; its log: " + (slurm / "logs").string());
  }
  const json board =
      parseJsonText(readWholeFile(results / "leaderboard.json"), (results / "leaderboard.json").string());
  for (const json& g : board["groups"]) log.say(g["summary"].get<std::string>());
  log.say("leaderboard: ", (results / "leaderboard.html").string());
}

}  // namespace convscope
