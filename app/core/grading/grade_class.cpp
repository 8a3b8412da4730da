#include "app/core/grading/grade_class.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "app/core/device/gpu_platform.h"
#include "app/core/grading/gpu_locks.h"
#include "app/core/grading/grade_submission.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/child_process.h"
#include "app/core/util/error.h"
#include "app/core/util/json_file.h"

namespace convscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string seconds(double s) {
  std::ostringstream text;
  text.precision(1);
  text << std::fixed << s << " s";
  return text.str();
}

}  // namespace

Leaderboard mergeClass(const fs::path& results, bool anonymize, const GradingLog& log, bool expectGpu) {
  const Leaderboard board = buildLeaderboard(results, anonymize);
  writeLeaderboard(results, board);
  // The jobs asked for a GPU and no task got one: the class is not graded, whatever the statuses say.
  if (expectGpu) {
    bool anyGpu = false, anyUnrun = false;
    for (const LeaderboardGroup& g : board.groups) {
      anyGpu = anyGpu || !g.gpu.empty();
      for (const json& row : g.rows) anyUnrun = anyUnrun || row["status"] == kGradeNoGpu;
    }
    if (!anyGpu && anyUnrun)
      throw Error(
          "no task of this grading had a GPU: every kernel was compiled but not run. The jobs asked for one "
          "with --gres; ask for a GRES your cluster has (sinfo -o '%P %G' lists them, e.g. --gres "
          "gpu:a100:1) or a partition with GPUs (--partition), and grade again");
  }
  for (const LeaderboardGroup& g : board.groups) log.say(g.summary);
  if (board.groups.size() > 1)
    log.say("(results from ", board.groups.size(), " different GPUs: separate tables, never ranked together)");
  for (const json& u : board.unreadable)
    log.say("not merged: ", u["file"].get<std::string>(), ": ", u["reason"].get<std::string>());
  log.say("leaderboard: ", (results / "leaderboard.html").string());
  return board;
}

void writeSkipped(const fs::path& results, const SubmissionFolder& found, const GradingLog& log) {
  writeFileAtomically(results / "skipped.json",
                      json({{"schema", kClassResultsSchema}, {"skipped", found.skipped}}).dump(2) + "\n");
  for (const json& s : found.skipped)
    log.say("skipped ", s["path"].get<std::string>(), ": ", s["reason"].get<std::string>());
}

ClassGradingOutcome gradeClassHere(const ClassGrading& request, const SubmissionFolder& found, const GradingLog& log,
                                   const KeepGoing& keepGoing, const ClassGradingProgress& progress) {
  const fs::path& dir = request.dir;
  const fs::path& results = request.results;
  const GradingSettings& settings = request.settings;
  const int jobs = std::max(1, request.jobs);
  if (::access(settings.program.c_str(), X_OK) != 0)
    throw Error(settings.program + ": cannot run ConvScope's grading program (convscope-cli) there: " +
                std::strerror(errno) + "; each submission is graded by it in a child process");
  ClassGradingOutcome outcome;
  outcome.submissions = static_cast<int>(found.submissions.size());
  const json current = settingsJson(settings);
  std::vector<Submission> pending;
  for (const Submission& s : found.submissions) {
    if (const auto kept = keptResult(results, s, current)) {
      log.say(s.id, "  ", kept->value("status", ""), "  unchanged, kept (graded ", kept->value("gradedAt", ""), ")");
      ++outcome.kept;
      continue;
    }
    pending.push_back(s);
  }
  if (!pending.empty()) {
    removeOldGradingRunRecord(results);
    if (!referencesCurrent(results, settings)) timeReferences(results, settings, log, keepGoing);
  }
  if (progress) progress(outcome);
  const int gpuSlots = gpuInfo().usable ? std::max<int>(1, int(visibleGpus().size())) : 0;
  std::atomic<size_t> next{0};
  std::mutex printing;
  bool sandboxWarned = false;  // said once per grading run, not once per submission
  // One submission in its child, its status said; what it wrote read back.
  const auto gradeOne = [&](const Submission& s) {
    std::vector<std::string> argv = {settings.program,        "grade",  dir.string(), "--out",
                                     results.string(),        "--only", s.id,         "--gpu-slots",
                                     std::to_string(gpuSlots)};
    for (const std::string& o : settingsOptions(settings)) argv.push_back(o);
    // Compile, check (and network) and timing, each within the limit, and a margin for the
    // grader; a child may also wait for the GPU locks while the others' steps run (GpuLocks).
    // This limit only catches a grader that hangs (the kernel's own steps have theirs).
    const int waitingAhead = gpuSlots > 0 ? jobs : 0;
    const double limit = (3.0 * settings.timeLimitSeconds + 120.0) * (1 + waitingAhead);
    const ChildOutcome child = runChildProcess(argv, limit, keepGoing);
    const std::lock_guard<std::mutex> lock(printing);
    if (child.cancelled) {
      log.say(s.id, "  stopped, not graded");
      ++outcome.notGraded;
      if (progress) progress(outcome);
      return;
    }
    std::string status;
    if (!child.succeeded()) {
      // The grader's own child did not finish: the submission still gets a status.
      json r = {{"schema", kClassResultsSchema},
                {"kind", kSubmissionKind},
                {"id", s.id},
                {"file", s.relative},
                {"path", fs::absolute(s.file).lexically_normal().string()},
                {"contentHash", submissionHash(s).value_or("")},
                {"settings", current},
                {"gpu", gpuJson()},
                {"status", child.timedOut ? kGradeTimeLimit : kGradeFaulted},
                {"message", "grading this submission " + child.describe(limit)},
                {"gradedAt", nowIso()},
                {"accuracy", nullptr},
                {"opTimeSeconds", json::object()},
                {"registers", nullptr},
                {"occupancy", nullptr}};
      fs::create_directories(results / "submissions");
      writeFileAtomically(resultFile(results, s.id), r.dump(2) + "\n");
      status = r["status"];
      // For the course staff: what the grader said before it ended (not in the student's message).
      log.warn(s.id, ": the grading process ", child.describe(limit), "; its output:\n", child.output);
    } else {
      const json r = parseJsonText(readWholeFile(resultFile(results, s.id)), s.id);
      status = r.value("status", std::string("(no status in its result)"));
      const json sandbox = r.value("sandbox", json());
      if (!sandboxWarned && sandbox.is_object() && !sandbox.value("enforced", true)) {
        log.say(sandboxWarning(sandbox.value("description", std::string())));
        sandboxWarned = true;
      }
    }
    log.say(s.id, "  ", status, "  ", seconds(child.seconds));
    ++outcome.graded;
    if (progress) progress(outcome);
  };
  const auto worker = [&] {
    for (size_t i = next++; i < pending.size() && keepGoing(); i = next++) {
      const Submission& s = pending[i];
      try {
        gradeOne(s);
      } catch (const std::exception& e) {  // the grader's own failure (a full disk): said, and the rest go on
        const std::lock_guard<std::mutex> lock(printing);
        log.warn(s.id, ": not graded: ", e.what());
        ++outcome.notGraded;
        if (progress) progress(outcome);
      }
    }
  };
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs; ++j) workers.emplace_back(worker);
  for (std::thread& t : workers) t.join();
  if (keepGoing() && !pending.empty()) retimeTop(results, settings, request.retimeCount, log, keepGoing);
  outcome.stopped = !keepGoing();  // also while the top was re-timed: retime.json is then not written
  if (outcome.stopped) log.say("interrupted: the finished results are kept and merged");
  mergeClass(results, request.anonymize, log);
  return outcome;
}

int exportForStudents(const fs::path& results, const fs::path& out, const GradingLog& log) {
  const bool anonymized = publishAnonymized(results, std::nullopt);
  const Leaderboard board = buildLeaderboard(results, false);
  std::map<std::string, std::string> pseudonymOf;
  if (anonymized) {
    buildLeaderboard(results, true);  // makes the pseudonyms of every id, as the board shows them
    std::istringstream mapping(readWholeFile(results / "pseudonyms.csv"));
    std::string line;
    std::getline(mapping, line);
    while (std::getline(mapping, line))
      if (const size_t comma = line.find(','); comma != std::string::npos)
        pseudonymOf[line.substr(0, comma)] = line.substr(comma + 1);
  }
  fs::create_directories(out);
  fs::permissions(out, fs::perms::owner_all, fs::perm_options::replace);
  int written = 0;
  for (const LeaderboardGroup& g : board.groups)
    for (const json& row : g.rows) {
      const std::string id = row["id"];
      const json result = parseJsonText(readWholeFile(resultFile(results, id)), resultFile(results, id).string());
      const std::string file = result.value("file", id + ".cu");
      const std::string seed = result.value("seed", std::string());
      json student = {{"schema", kClassResultsSchema},
                      {"kind", "convscope-class-student-result"},
                      {"id", id},
                      {"pseudonym", anonymized ? json(pseudonymOf[id]) : json(nullptr)},
                      {"file", file},
                      {"status", row["status"]},
                      {"message", row["message"]},
                      {"rank", row["rank"]},
                      {"of", g.rows.size()},
                      {"gpu", g.gpu.empty() ? json(nullptr) : json(g.gpu)},
                      {"accuracy", row["accuracy"]},
                      {"opTimeSeconds", row["opTimeSeconds"]},
                      {"speedupOverCudnn", row["speedupOverCudnn"]},
                      {"registers", row["registers"]},
                      {"occupancy", row["occupancy"]},
                      {"seed", seed.empty() ? json(nullptr) : json(seed)},
                      {"gradedAt", row["gradedAt"]}};
      std::ostringstream text;
      text << (board.title.empty() ? "ConvScope grading" : board.title) << ": " << id << "\n\n"
           << "File:    " << file << "\n"
           << "Status:  " << row["status"].get<std::string>() << "\n"
           << "Rank:    " << row["rank"].get<int>() << " of " << g.rows.size()
           << (g.gpu.empty() ? " (graded without a GPU)" : " on " + g.gpu) << "\n";
      if (anonymized) text << "Your pseudonym on the published leaderboard: " << pseudonymOf[id] << "\n";
      if (row["accuracy"].is_number()) text << "Accuracy: " << row["accuracy"].get<double>() << "\n";
      for (const auto& [batch, time] : row["opTimeSeconds"].items())
        if (time.is_number()) text << "Op time at batch " << batch << ": " << time.get<double>() * 1e3 << " ms\n";
      text << "\n" << row["message"].get<std::string>() << "\n";
      if (!seed.empty())
        text << "\nTo repeat your check with the same shapes: convscope-cli kernel check " << file << " --seed " << seed
             << "\n";
      writeFileAtomically(out / (id + ".txt"), text.str(), 0600);
      writeFileAtomically(out / (id + ".json"), student.dump(2) + "\n", 0600);
      ++written;
    }
  log.say("exported ", written, " students' results to ", out.string(), " (ID.txt and ID.json each)");
  return written;
}

}  // namespace convscope
