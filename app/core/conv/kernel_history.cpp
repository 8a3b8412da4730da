#include "app/core/conv/kernel_history.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <system_error>

#include "app/core/util/atomic_file.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/json_file.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kVersionSchema = "convscope-kernel-version/1";
constexpr const char* kFolderSchema = "convscope-kernel-history/1";

// FNV-1a: the same folder for the same path in every build and on every run (std::hash is not).
uint64_t stableHash(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

fs::path absolutePath(const fs::path& file) {
  std::error_code error;
  const fs::path absolute = fs::absolute(file, error);
  return (error ? file : absolute).lexically_normal();
}

std::string nowUtc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

fs::path versionPath(const fs::path& folder, int number) {
  char name[32];
  std::snprintf(name, sizeof name, "v%06d.json", number);
  return folder / name;
}

json toJson(const KernelVersion& version) {
  json opTimes = json::array();
  for (const KernelOpTime& time : version.opTimes)
    opTimes.push_back({{"batch", time.batch}, {"seconds", time.seconds}});
  json check = nullptr;
  if (version.checkPassed) check = {{"passed", *version.checkPassed}, {"summary", version.checkSummary}};
  return {{"schema", kVersionSchema},
          {"number", version.number},
          {"savedAt", version.savedAt},
          {"source", version.source},
          {"sass", version.sass ? json(*version.sass) : json(nullptr)},
          {"sassMissingReason", version.sassMissingReason},
          {"check", check},
          {"opTimes", opTimes}};
}

// A version file's contents; throws convscope::Error saying what is wrong with it (without the
// file's name: the caller adds it).
KernelVersion versionFromJson(const json& document) {
  if (!document.is_object() || document.value("schema", "") != kVersionSchema)
    throw Error(std::string("not a ConvScope kernel version (no \"schema\": \"") + kVersionSchema + "\")");
  try {
    KernelVersion version;
    version.number = jsonWholeNumber(document.at("number"), "number", 1, std::numeric_limits<int>::max());
    version.savedAt = document.at("savedAt").get<std::string>();
    version.source = document.at("source").get<std::string>();
    if (version.source.size() > KernelHistory::kMaxSourceBytes)
      throw Error("its source is larger than " + formatBytes(KernelHistory::kMaxSourceBytes));
    if (const json& sass = document.at("sass"); !sass.is_null()) version.sass = sass.get<std::string>();
    version.sassMissingReason = document.value("sassMissingReason", "");
    if (const json& check = document.at("check"); !check.is_null()) {
      version.checkPassed = check.at("passed").get<bool>();
      version.checkSummary = check.at("summary").get<std::string>();
    }
    for (const json& time : document.at("opTimes")) {
      const int batch = jsonWholeNumber(time.at("batch"), "opTimes.batch", 1, 1 << 24);
      const double seconds = time.at("seconds").get<double>();
      if (!(seconds >= 0.0) || seconds > 1e6)
        throw Error("opTimes.seconds " + std::to_string(seconds) + " is not a time");
      version.opTimes.push_back({batch, seconds});
    }
    std::sort(version.opTimes.begin(), version.opTimes.end(),
              [](const KernelOpTime& a, const KernelOpTime& b) { return a.batch < b.batch; });
    return version;
  } catch (const json::exception& e) {
    throw Error(describeJsonFieldError(e));
  }
}

}  // namespace

fs::path kernelHistoryRoot() {
  if (const char* explicitRoot = std::getenv("CONVSCOPE_KERNEL_HISTORY"); explicitRoot && *explicitRoot)
    return explicitRoot;
  fs::path data;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg && fs::path(xdg).is_absolute()) {
    data = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    data = fs::path(home) / ".local/share";
  } else {
    data = fs::temp_directory_path();
  }
  return data / "ConvScope/convscope/kernel-history";
}

fs::path kernelHistoryFolder(const fs::path& kernelFile, const fs::path& root) {
  const fs::path absolute = absolutePath(kernelFile);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(stableHash(absolute.string())));
  return root / (absolute.filename().string() + "-" + hash);
}

std::string comparableSass(const std::string& sass) {
  static const std::regex address(R"(/\*[0-9a-fA-F]{4,}\*/)");
  static const std::regex encoding(R"(/\*\s*0x[0-9a-fA-F]+\s*\*/)");
  std::istringstream in(sass);
  std::string result;
  for (std::string line; std::getline(in, line);) {
    std::string kept = std::regex_replace(std::regex_replace(line, encoding, ""), address, "");
    while (!kept.empty() && std::isspace(static_cast<unsigned char>(kept.back()))) kept.pop_back();
    const bool onlyMarkup = kept.find_first_not_of(" \t") == std::string::npos;
    if (onlyMarkup && !line.empty() && line.find_first_not_of(" \t\r") != std::string::npos) continue;
    // The indentation before an address is kept relative: leading blanks trimmed to one level.
    const size_t start = kept.find_first_not_of(" \t");
    result += (start == std::string::npos ? std::string() : (start > 0 ? "  " : "") + kept.substr(start)) + "\n";
  }
  return result;
}

std::optional<KernelOpTime> KernelVersion::chartedOpTime() const {
  if (opTimes.empty()) return std::nullopt;
  for (const KernelOpTime& time : opTimes)
    if (time.batch == 10000) return time;
  return opTimes.back();
}

std::string KernelVersion::status() const {
  return !checkPassed ? "compiled" : *checkPassed ? "passed" : "failed";
}

KernelHistory::KernelHistory(const fs::path& kernelFile, fs::path root, size_t maxVersions)
    : kernelFile_(absolutePath(kernelFile)),
      folder_(kernelHistoryFolder(kernelFile, root)),
      maxVersions_(std::max<size_t>(1, maxVersions)) {
  reload();
}

const KernelVersion* KernelHistory::version(int number) const {
  for (const KernelVersion& version : versions_)
    if (version.number == number) return &version;
  return nullptr;
}

void KernelHistory::reload() {
  versions_.clear();
  skipped_.clear();
  highestFileNumber_ = 0;
  std::error_code error;
  if (!fs::is_directory(folder_, error)) return;
  static const std::regex versionName(R"(v\d+\.json)");
  std::map<int, KernelVersion> byNumber;
  for (fs::directory_iterator it(folder_, error), end; !error && it != end; it.increment(error)) {
    const fs::path path = it->path();
    if (!std::regex_match(path.filename().string(), versionName)) continue;  // kernel.json, temporary files
    highestFileNumber_ = std::max(highestFileNumber_, std::atoi(path.filename().string().c_str() + 1));
    try {
      std::error_code sizeError;
      const uintmax_t size = fs::file_size(path, sizeError);
      if (sizeError) throw Error("cannot be read: " + sizeError.message());
      // Sized before reading: a history folder is not trusted to hold only what ConvScope wrote.
      if (size > kMaxVersionFileBytes)
        throw Error(formatBytes(size) + ", larger than a kernel version can be (" + formatBytes(kMaxVersionFileBytes) +
                    ")");
      std::ifstream in(path, std::ios::binary);
      if (!in) throw Error("cannot be read");
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      KernelVersion version = versionFromJson(parseJsonText(text, path.string()));
      if (byNumber.count(version.number))
        throw Error("holds version " + std::to_string(version.number) + ", which another file holds too");
      byNumber.emplace(version.number, std::move(version));
    } catch (const std::exception& e) {
      const std::string what = e.what();
      // parseJsonText names the file already.
      skipped_.push_back(what.rfind(path.string(), 0) == 0 ? what : path.string() + ": " + what);
    }
  }
  if (error) skipped_.push_back(folder_.string() + ": cannot be listed: " + error.message());
  for (auto& [number, version] : byNumber) versions_.push_back(std::move(version));
  std::sort(skipped_.begin(), skipped_.end());
}

void KernelHistory::write(const KernelVersion& version) {
  std::error_code error;
  fs::create_directories(folder_, error);
  if (error)
    throw Error(kernelFile_.string() + ": cannot keep its history in " + folder_.string() + ": " + error.message());
  const fs::path index = folder_ / "kernel.json";
  if (!fs::exists(index, error))
    writeFileAtomically(index, json{{"schema", kFolderSchema}, {"file", kernelFile_.string()}}.dump(2) + "\n");
  writeFileAtomically(versionPath(folder_, version.number), toJson(version).dump(1) + "\n");
}

void KernelHistory::dropOldest() {
  while (versions_.size() > maxVersions_) {
    std::error_code error;
    fs::remove(versionPath(folder_, versions_.front().number), error);  // a file left behind is dropped next time
    versions_.erase(versions_.begin());
  }
}

int KernelHistory::recordCompiled(const std::string& source, const std::optional<std::string>& sass,
                                  const std::string& sassMissingReason) {
  if (source.size() > kMaxSourceBytes)
    throw Error(kernelFile_.string() + ": " + formatBytes(source.size()) + " of source, more than its history keeps (" +
                formatBytes(kMaxSourceBytes) + ")");
  std::optional<std::string> keptSass = sass;
  std::string whyNoSass = sassMissingReason;
  if (keptSass && keptSass->size() > kMaxSassBytes) {
    whyNoSass = "its SASS (" + formatBytes(keptSass->size()) + ") is larger than the history keeps (" +
                formatBytes(kMaxSassBytes) + ")";
    keptSass.reset();
  }
  if (!versions_.empty() && versions_.back().source == source) {
    KernelVersion& last = versions_.back();
    if (keptSass && last.sass != keptSass) {
      last.sass = keptSass;
      last.sassMissingReason.clear();
      write(last);
    }
    return last.number;
  }
  KernelVersion version;
  version.number = std::max(highestFileNumber_, versions_.empty() ? 0 : versions_.back().number) + 1;
  highestFileNumber_ = version.number;
  version.savedAt = nowUtc();
  version.source = source;
  version.sass = keptSass;
  version.sassMissingReason = keptSass ? std::string() : whyNoSass;
  write(version);
  versions_.push_back(std::move(version));
  dropOldest();
  return versions_.back().number;
}

bool KernelHistory::recordCheck(int number, bool passed, const std::string& summary) {
  for (KernelVersion& version : versions_)
    if (version.number == number) {
      version.checkPassed = passed;
      version.checkSummary = summary;
      write(version);
      return true;
    }
  return false;
}

bool KernelHistory::recordOpTimes(int number, std::vector<KernelOpTime> opTimes) {
  for (KernelVersion& version : versions_)
    if (version.number == number) {
      std::sort(opTimes.begin(), opTimes.end(),
                [](const KernelOpTime& a, const KernelOpTime& b) { return a.batch < b.batch; });
      version.opTimes = std::move(opTimes);
      write(version);
      return true;
    }
  return false;
}

}  // namespace convscope
