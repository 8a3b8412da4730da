// What every step of a grading shares: its settings (which must match for a kept result to
// stand), where its results go, how it reports as it goes and how it is stopped.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/grading/submissions.h"

namespace convscope {

// One kernel's outcome on the network must equal the course variants' prediction count within
// the five images in 10,000 that the tensor-core variants are allowed (tests/gpu).
inline constexpr int kAccuracyToleranceImages = 5;
inline constexpr int kCheckShapes = 12;
inline constexpr const char* kSubmissionKind = "convscope-class-submission";
// How many of the top of the ranking are timed a second time to confirm their order.
inline constexpr int kDefaultRetimeCount = 5;

struct GradingSettings {
  std::filesystem::path model, data;
  int timeLimitSeconds = 120;
  std::optional<int> memoryLimitMb;
  // The convscope-cli that grades each submission in a child ('grade DIR --only ID') and runs
  // the kernels' processes: the grading program itself in the CLI, beside the window's program.
  std::string program;
};

// What a grading says as it goes: lines for the course staff (the CLI's standard output) and
// warnings (its standard error). Either may be unset.
struct GradingLog {
  std::function<void(const std::string&line)> out, err;

  template <class... Parts>
  void say(const Parts&... parts) const {
    if (out) out(joined(parts...));
  }
  template <class... Parts>
  void warn(const Parts&... parts) const {
    if (err) err(joined(parts...));
  }

 private:
  template <class... Parts>
  static std::string joined(const Parts&... parts) {
    std::ostringstream text;
    (text << ... << parts);
    return text.str();
  }
};

// Whether to go on: false stops the grading's children (Ctrl+C in the CLI, Cancel in the window);
// what is finished is kept.
using KeepGoing = std::function<bool()>;

// The options a child or a Slurm task needs to grade with the same settings.
std::vector<std::string> settingsOptions(const GradingSettings& s);

// The GPU here as results record it; null without one.
nlohmann::json gpuJson();

// What must match for a kept result to stand: a change to any of these regrades everything.
nlohmann::json settingsJson(const GradingSettings& s);

// RESULTS/submissions/ID.json.
std::filesystem::path resultFile(const std::filesystem::path& results, const std::string& id);

// The kept result when the file and the settings are as they were, else nothing.
std::optional<nlohmann::json> keptResult(const std::filesystem::path& results, const Submission& s,
                                         const nlohmann::json& settings);

// An older ConvScope kept one seed for a whole grading run in RESULTS/grading-run.json and reused
// it for every later --only; each grading now draws its own, so that file would only mislead.
void removeOldGradingRunRecord(const std::filesystem::path& results);

// Now, as "2026-11-28T14:05:00Z".
std::string nowIso();

// A small file's bytes. Throws convscope::Error naming it.
std::string readWholeFile(const std::filesystem::path& path);

}  // namespace convscope
