#include "app/core/grading/grading_settings.h"

#include <ctime>
#include <fstream>

#include "app/core/device/gpu_platform.h"
#include "app/core/grading/class_leaderboard.h"
#include "app/core/util/error.h"
#include "app/core/util/hashing.h"
#include "app/core/util/json_file.h"

namespace convscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json clocksJson(const GpuInfo& gpu) {
  if (gpu.smClockMHz <= 0) return nullptr;
  return {{"smPeakMHz", gpu.smClockMHz}, {"memoryPeakMHz", gpu.memoryClockMHz}};
}

}  // namespace

std::vector<std::string> settingsOptions(const GradingSettings& s) {
  std::vector<std::string> options = {"--model",      fs::absolute(s.model).string(),
                                      "--data",       fs::absolute(s.data).string(),
                                      "--time-limit", std::to_string(s.timeLimitSeconds)};
  if (s.memoryLimitMb) options.insert(options.end(), {"--memory-limit", std::to_string(*s.memoryLimitMb)});
  return options;
}

json gpuJson() {
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) return nullptr;
  return {{"name", gpu.name},
          {"computeCapability", std::to_string(gpu.computeMajor) + "." + std::to_string(gpu.computeMinor)},
          {"multiprocessors", gpu.multiprocessors},
          {"memoryGiB", gpu.memoryGiB},
          {"driver", gpu.driverVersion},
          {"cudaRuntime", gpu.runtimeVersion},
          {"cudnn", gpu.cudnnVersion},
          // The clocks a result was taken under: the GPU's peak SM and memory clocks as the CUDA
          // runtime reports them (the current clock under boost is not reported reliably).
          {"clocks", clocksJson(gpu)}};
}

json settingsJson(const GradingSettings& s) {
  const GpuInfo& gpu = gpuInfo();
  json settings = {{"model", s.model.filename().string()},
                   {"modelHash", hex64(sipHash24(readWholeFile(s.model), 0, 0))},
                   {"batches", kGradeBatches},
                   {"shapes", kCheckShapes},
                   {"timeLimitSeconds", s.timeLimitSeconds},
                   {"memoryLimitMb", s.memoryLimitMb ? json(*s.memoryLimitMb) : json(nullptr)},
                   {"convscopeVersion", CONVSCOPE_VERSION},
                   {"gpu", gpu.usable ? gpu.name : ""}};
  return settings;
}

fs::path resultFile(const fs::path& results, const std::string& id) {
  return results / "submissions" / (id + ".json");
}

std::optional<json> keptResult(const fs::path& results, const Submission& s, const json& settings) {
  const fs::path file = resultFile(results, s.id);
  if (!fs::exists(file)) return std::nullopt;
  try {
    json kept = parseJsonText(readWholeFile(file), file.string());
    const std::optional<std::string> hash = submissionHash(s);
    if (hash && kept.value("schema", 0) == kClassResultsSchema && kept.value("contentHash", "") == *hash &&
        kept.value("settings", json()) == settings)
      return kept;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

void removeOldGradingRunRecord(const fs::path& results) {
  std::error_code ignored;
  fs::remove(results / "grading-run.json", ignored);
}

std::string readWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read it");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string nowIso() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

}  // namespace convscope
