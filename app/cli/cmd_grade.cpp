// convscope-cli grade: a whole class's kernels compiled, checked, run on the test set, timed and
// ranked (docs/class-mode.md). The grading itself is app/core/grading (the window's Class tab
// grades through it too); this file reads the command line and says the grading's lines.
#include <csignal>

#include <atomic>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/data/image_set.h"
#include "app/core/grading/class_leaderboard.h"
#include "app/core/grading/grade_class.h"
#include "app/core/grading/grade_submission.h"
#include "app/core/grading/slurm_grading.h"
#include "app/core/util/error.h"

namespace convscope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kHelp = R"(usage: convscope-cli grade DIR --out RESULTS [--jobs N] [--only ID]
                           [--anonymize | --no-anonymize] [--title TEXT]
                           [--retime-top K] [--time-limit SECONDS] [--memory-limit MB]
                           [--model FILE.onnx] [--data DIR]
       convscope-cli grade DIR --out RESULTS --slurm [--partition P] [--gres GRES|none]
                           [--sbatch-arg NAME=VALUE ...] [--prolog LINE]
                           [--max-parallel K] [--wait] [--wait-timeout SECONDS] [--dry-run]
                           [options above]
       convscope-cli grade merge RESULTS [--anonymize | --no-anonymize] [--time-references]
                           [--retime-top K] [--time-limit SECONDS] [--memory-limit MB]
                           [--model FILE.onnx] [--data DIR] [--title TEXT]
       convscope-cli grade export RESULTS --out FOLDER

Grades a class's kernels and ranks them (docs/class-mode.md). Each submission in DIR is a FILE.cu
or a folder holding exactly one .cu; its name is the student's id. Anything else is reported and
skipped, symbolic links and whatever is not a regular file included. Each submission is read
once, compiled once in a sandboxed process, checked on 12 random shapes and the model's conv
layers (from a seed of its own, drawn from the system's secure random source when its grading
starts and published in its result
afterwards), run on the 10,000 test images and timed at batches 100, 1,000 and 10,000, each step
in a child process with a time limit. Results: RESULTS/submissions/ID.json, merged into
RESULTS/leaderboard.json, .csv and .html: correct submissions first, ranked by their conv op-time
sum at batch 10,000, one table per GPU. A submission whose file and settings have not changed
since its last grading keeps its result and is not graded again.
  --jobs N            grade N submissions at once: they compile and are checked side by side, but
                      while one is timed nothing else of the grading runs on the machine (with
                      several GPUs: one timing per GPU, each on its own share of the CPU cores)
  --only ID           grade this submission alone (what each Slurm array task runs)
  --anonymize         the published leaderboard (leaderboard.json, .csv, .html) shows stable
                      pseudonyms, not ids, and no file names; the mapping stays in
                      RESULTS/pseudonyms.csv, readable by its owner alone. The choice is recorded
                      in RESULTS: every later grade and merge keeps it
  --no-anonymize      publish the ids again (recorded likewise)
  --title TEXT        the leaderboard's title, such as 'Milestone 2: conv1 and conv2' (recorded
                      likewise; the page also says when it was merged)
  --retime-top K      once the class is graded, time the K fastest correct submissions a second
                      time, slowest of them first; the leaderboard says whether their order held
                      (default 5; 0: none)
  --time-limit S      the time limit of each step's child process (default 120 s)
  --memory-limit MB   the host memory one inference of a submission may take (default: half of
                      this machine's, in a Slurm job half of its allocation); a kernel's process
                      that holds more than that plus 2,000 MB (for the CUDA libraries and the
                      compiler) is stopped (status 'memory limit')
  --model FILE.onnx   the network the kernels run (default: the course's course-high.onnx)
  --data DIR          its test set (default: $CONVSCOPE_DATA, else
                      /usr/share/datasets/fashion-mnist)
  --slurm             write an sbatch array script (one task per new or changed submission) and a
                      merge job that depends on it (afterok), and submit both; when no task got a
                      GPU the merge job fails saying so. --dry-run prints them and writes nothing.
                      A task's --time is 3 time limits (compile, test set, timing) and 2 minutes
  --partition P       the Slurm partition both jobs run in (default: the cluster's default)
  --gres GRES         the generic resources each task and the merge job request (default gpu:1:
                      a GPU of its own; none: request nothing, where the cluster has no GPUs and
                      the class is only compiled)
  --max-parallel K    the array's throttle (%K, default 8)
  --sbatch-arg NAME=VALUE ...
                      sbatch options for both jobs, without their dashes: account=course42
                      qos=normal constraint=h100 mem=32G cpus-per-task=4 (each becomes an
                      #SBATCH --NAME=VALUE line); the site's rules decide which it needs
  --prolog LINE       a shell line both jobs run before the grader, such as 'module load
                      cuda/13.0' (repeatable)
  --wait              wait for the merge job (squeue, every 1 s at first, then up to 30 s apart)
                      and print the summary, or which tasks failed with the commands that grade
                      them again; give up after --wait-timeout seconds (default 3600; the jobs
                      go on)
  export RESULTS      one file per student into --out FOLDER (ID.txt to mail, ID.json for a
                      course site): status, message, figures, rank, the seed that repeats the
                      check and, when anonymized, the student's pseudonym
  merge RESULTS       write the leaderboard from the submissions' results (a grading ends with
                      it; it can also be run by hand); --time-references first times the course's
                      variants on the GPU here, and --retime-top K re-times the top K here (both
                      are what the Slurm merge job runs)
Exit code: 0 when every submission got a status (whatever it is), 1 on an error of the grader,
130 when interrupted (Ctrl+C; the finished results are kept and merged).
)";

std::atomic<bool> g_interrupted{false};
void onInterrupt(int) {
  g_interrupted = true;
}

// Ctrl+C stops the grading's children; what is finished is kept.
KeepGoing stopOnCtrlC() {
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigaction(SIGINT, &action, nullptr);
  return [] { return !g_interrupted.load(); };
}

GradingLog standardOutputLog() {
  GradingLog log;
  // A line that is a whole text (a script, a manifest) already ends in its line break.
  const auto endLine = [](const std::string& line) { return line.empty() || line.back() != '\n' ? "\n" : ""; };
  log.out = [endLine](const std::string& line) { std::cout << line << endLine(line) << std::flush; };
  log.err = [endLine](const std::string& line) { std::cerr << line << endLine(line) << std::flush; };
  return log;
}

GradingSettings readSettings(const Args& args) {
  GradingSettings s;
  s.model = args.value("model").value_or(defaultModelPath());
  s.data = args.value("data").value_or(defaultDataFolder().string());
  s.timeLimitSeconds = args.intValue("time-limit", 120, 1);
  if (args.has("memory-limit")) s.memoryLimitMb = args.intValue("memory-limit", 0, 1);
  s.program = thisProgram();
  return s;
}

// --anonymize, --no-anonymize or neither (the recorded choice stands: publishAnonymized).
std::optional<bool> anonymizeAsked(const Args& args) {
  if (args.has("anonymize") && args.has("no-anonymize")) throw Error("grade: --anonymize or --no-anonymize, not both");
  if (args.has("anonymize")) return true;
  if (args.has("no-anonymize")) return false;
  return std::nullopt;
}

std::string seconds(double s) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << s << " s";
  return text.str();
}

}  // namespace

int runGrade(const std::vector<std::string>& tokens) {
  const GradingLog log = standardOutputLog();
  if (tokens.empty() || tokens[0] == "--help" || tokens[0] == "-h") {
    std::cout << kHelp;
    return tokens.empty() ? 2 : 0;
  }
  if (tokens[0] == "export") {
    if (tokens.size() < 2 || tokens[1].rfind("--", 0) == 0)
      throw Error("grade export: which results folder? (grade export RESULTS --out FOLDER)");
    const fs::path results = tokens[1];
    if (!fs::is_directory(results / "submissions")) throw Error(results.string() + ": not a results folder");
    const Args args({tokens.begin() + 2, tokens.end()}, {"out"}, {});
    const std::optional<std::string> out = args.value("out");
    if (!out) throw Error("grade export: where do the students' files go? (--out FOLDER)");
    exportForStudents(results, *out, log);
    return 0;
  }
  if (tokens[0] == "merge") {
    if (tokens.size() < 2 || tokens[1].rfind("--", 0) == 0)
      throw Error("grade merge: which results folder? (grade merge RESULTS)");
    const fs::path results = tokens[1];
    if (!fs::is_directory(results)) throw Error(results.string() + ": not a results folder");
    const Args args({tokens.begin() + 2, tokens.end()},
                    {"model", "data", "time-limit", "memory-limit", "retime-top", "title"},
                    {"anonymize", "no-anonymize", "time-references", "expect-gpu"});
    const bool anonymize = publishAnonymized(results, anonymizeAsked(args));
    if (const auto title = args.value("title")) recordLeaderboardTitle(results, *title);
    // Ctrl+C ends it at once, writing nothing: a half-timed reference must not stand as current.
    const KeepGoing keepGoing = [] { return true; };
    if (args.has("time-references")) timeReferences(results, readSettings(args), log, keepGoing);
    retimeTop(results, readSettings(args), args.intValue("retime-top", 0, 0), log, keepGoing);
    mergeClass(results, anonymize, log, args.has("expect-gpu"));
    return 0;
  }
  const fs::path dir = tokens[0];
  const Args args({tokens.begin() + 1, tokens.end()},
                  {"out", "jobs", "only", "time-limit", "memory-limit", "model", "data", "partition", "gres",
                   "max-parallel", "wait-timeout", "gpu-slots", "retime-top", "sbatch-arg", "prolog", "title"},
                  {"anonymize", "no-anonymize", "slurm", "wait", "dry-run"});
  const std::optional<std::string> out = args.value("out");
  if (!out) throw Error("grade: where do the results go? (--out RESULTS)");
  const fs::path results = fs::absolute(*out);
  // A dry run writes nothing, not even the results folder.
  const bool dryRun = args.has("slurm") && args.has("dry-run");
  if (!dryRun) fs::create_directories(results / "submissions");
  const std::optional<bool> anonymizeAskedHere = anonymizeAsked(args);
  const GradingSettings settings = readSettings(args);
  if (!fs::exists(settings.model)) throw Error(settings.model.string() + ": no such model file");
  const SubmissionFolder found = discoverSubmissions(dir);
  if (const auto only = args.value("only")) {
    const auto it = std::find_if(found.submissions.begin(), found.submissions.end(),
                                 [&](const Submission& s) { return s.id == *only; });
    if (it == found.submissions.end()) {
      for (const json& skipped : found.skipped) {  // a link, a FIFO...: why it is not graded
        const std::string path = skipped["path"];
        if (path == *only || path == *only + ".cu" || path.rfind(*only + "/", 0) == 0)
          throw Error(dir.string() + ": '" + *only + "' is not graded: " + path + ": " +
                      skipped["reason"].get<std::string>());
      }
      throw Error(dir.string() + ": no submission '" + *only + "' in it");
    }
    if (const auto kept = keptResult(results, *it, settingsJson(settings))) {
      std::cout << it->id << "  " << kept->value("status", "") << "  unchanged, kept\n";
      return 0;
    }
    // Ctrl+C (or its parent's cancel) ends it at once, writing nothing: a step cut short is no
    // verdict, and its parent gives the submission its status.
    const json r = gradeSubmission(results, *it, settings, args.intValue("gpu-slots", 0, 0), log, [] { return true; });
    std::cout << it->id << "  " << r["status"].get<std::string>() << "  " << seconds(r["gradingSeconds"]) << "\n";
    return 0;
  }
  if (!dryRun) writeSkipped(results, found, log);
  if (const auto title = args.value("title"); title && !dryRun) recordLeaderboardTitle(results, *title);
  if (args.has("slurm")) {
    SlurmOptions o;
    o.partition = args.value("partition");
    if (const auto gres = args.value("gres")) {
      if (*gres == "none")
        o.gres.reset();
      else
        o.gres = gres;
    }
    for (const std::string& arg : args.values("sbatch-arg"))
      o.sbatchArgs.push_back(scriptLine("--sbatch-arg", arg, true));
    for (const std::string& line : args.values("prolog")) o.prolog.push_back(scriptLine("--prolog", line, false));
    o.maxParallel = args.intValue("max-parallel", 8, 1);
    o.wait = args.has("wait");
    o.dryRun = args.has("dry-run");
    o.waitTimeoutSeconds = args.intValue("wait-timeout", 3600, 1);
    o.retimeCount = args.intValue("retime-top", kDefaultRetimeCount, 0);
    gradeOnSlurm(dir, results, found, settings, o,
                 o.dryRun ? anonymizeAskedHere.value_or(false) : publishAnonymized(results, anonymizeAskedHere), log);
    return 0;
  }
  ClassGrading request;
  request.dir = dir;
  request.results = results;
  request.settings = settings;
  request.jobs = args.intValue("jobs", 1, 1);
  request.retimeCount = args.intValue("retime-top", kDefaultRetimeCount, 0);
  request.anonymize = publishAnonymized(results, anonymizeAskedHere);
  // Ctrl+C stops the children and keeps (and merges) what is finished.
  return gradeClassHere(request, found, log, stopOnCtrlC()).stopped ? 130 : 0;
}

}  // namespace convscope::cli
