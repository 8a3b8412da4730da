#include "app/core/grading/class_leaderboard.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "app/core/conv/variant_table.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/csv_field.h"
#include "app/core/util/error.h"
#include "app/core/util/hashing.h"
#include "app/core/util/json_file.h"

namespace convscope {

using nlohmann::json;

namespace {

std::string readWholeFile(const std::filesystem::path& path, uintmax_t maxBytes = kClassResultFileMaxBytes,
                          const char* what = "a class result") {
  // A result is a few kilobytes; a huge file in the folder (a log, a stray dump) is named, not read.
  std::error_code sizeError;
  const auto size = std::filesystem::file_size(path, sizeError);
  if (sizeError) throw Error(path.string() + ": cannot read it (" + sizeError.message() + ")");
  if (size > maxBytes)
    throw Error(path.string() + ": " + std::to_string(size) + " bytes, too large for " + what + " (at most " +
                std::to_string(maxBytes) + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read it");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rank order of the statuses that are not ranked by time.
int statusOrder(const std::string& status) {
  static const std::vector<std::string> order = {
      kGradePassed,    kGradeFlagged,     kGradeNoGpu,   kGradeNoCompiler,     kGradeWrong,
      kGradeTimeLimit, kGradeMemoryLimit, kGradeFaulted, kGradeBreaksContract, kGradeDoesNotCompile};
  const auto it = std::find(order.begin(), order.end(), status);
  return it == order.end() ? int(order.size()) : int(it - order.begin());
}

std::string batchKey() {
  return std::to_string(kGradeBatches.back());
}

// The op-time sum at the ranking batch, or nothing.
std::optional<double> firstTime(const json& row) {
  const json& times = row.value("opTimeSeconds", json::object());
  if (!times.is_object() || !times.contains(batchKey()) || !times[batchKey()].is_number()) return std::nullopt;
  return times[batchKey()].get<double>();
}

std::optional<double> retimedTime(const json& row) {
  const json& retimed = row.value("retimedSeconds", json());
  return retimed.is_number() ? std::optional<double>(retimed.get<double>()) : std::nullopt;
}

// What the row is ranked by: its first timing, taken for every submission under the same
// conditions (a second timing, of the top alone and later, would mix conditions: on an H200 the
// re-timed top came out 0.1 to 0.2 % slower, enough to reorder a class of near-ties).
std::optional<double> rankingTime(const json& row) {
  return firstTime(row);
}

// The re-timings of RESULTS/retime.json by id, for the GPU they were taken on; empty when there
// is none (a broken one is reported as unreadable).
struct Retimings {
  std::string gpu;
  std::map<std::string, json> byId;
};

Retimings readRetimings(const std::filesystem::path& results, std::vector<json>& unreadable) {
  Retimings retimings;
  const std::filesystem::path file = results / kRetimeFileName;
  if (!std::filesystem::exists(file)) return retimings;
  try {
    const json retime = parseJsonText(readWholeFile(file), file.string());
    if (!retime.is_object() || retime.value("schema", 0) != kClassResultsSchema || !retime.contains("gpu") ||
        !retime["gpu"].is_string() || !retime.value("submissions", json()).is_array())
      throw Error(file.string() + ": not a re-timing of schema " + std::to_string(kClassResultsSchema));
    if (retime.value("batch", 0) != kGradeBatches.back())
      throw Error(file.string() + ": re-timed at another batch than " + batchKey());
    retimings.gpu = retime["gpu"];
    for (const json& entry : retime["submissions"]) {
      if (!entry.is_object() || !entry.value("id", json()).is_string() ||
          !entry.value("contentHash", json()).is_string())
        throw Error(file.string() + ": an entry without its \"id\" and \"contentHash\"");
      if (!entry.value("seconds", json()).is_number() && !entry.value("failure", json()).is_string())
        throw Error(file.string() + ": the entry of " + entry["id"].get<std::string>() +
                    " has neither \"seconds\" nor \"failure\"");
      retimings.byId[entry["id"]] = entry;
    }
  } catch (const std::exception& e) {
    unreadable.push_back({{"file", kRetimeFileName}, {"reason", e.what()}});
    return {};
  }
  return retimings;
}

std::string millisecondsText(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f ms", seconds * 1e3);
  return buffer;
}

// Whether the second timing kept the first one's order among the re-timed rows, in words.
std::string retimeSummaryOf(const std::vector<json>& rows) {
  std::vector<const json*> retimed;
  for (const json& row : rows)
    if (countsAsPassed(row["status"]) && firstTime(row) && retimedTime(row)) retimed.push_back(&row);
  if (retimed.empty()) return "";
  std::vector<const json*> byFirst = retimed, bySecond = retimed;
  std::stable_sort(byFirst.begin(), byFirst.end(),
                   [](const json* a, const json* b) { return *firstTime(*a) < *firstTime(*b); });
  std::stable_sort(bySecond.begin(), bySecond.end(),
                   [](const json* a, const json* b) { return *retimedTime(*a) < *retimedTime(*b); });
  // How far one submission's two timings lie apart: differences in the ranking smaller than that
  // are ties of the timer, not of the kernels.
  double spread = 0.0;
  for (const json* row : retimed)
    spread = std::max(spread, std::abs(*retimedTime(*row) - *firstTime(*row)) / *firstTime(*row));
  char spreadText[64];
  std::snprintf(spreadText, sizeof spreadText, " (a submission's two timings differ by up to %.2f %%)", spread * 100);
  const std::string head = "the top " + std::to_string(retimed.size()) + " re-timed" + spreadText;
  if (byFirst == bySecond) return head + ": the second timing kept the order";
  std::string swaps;
  for (size_t i = 0; i + 1 < byFirst.size(); ++i) {
    const json& a = *byFirst[i];
    const json& b = *byFirst[i + 1];
    if (*retimedTime(b) < *retimedTime(a))
      swaps += std::string(swaps.empty() ? "" : "; ") + b["id"].get<std::string>() + " came before " +
               a["id"].get<std::string>() + " (" + millisecondsText(*retimedTime(b)) + " against " +
               millisecondsText(*retimedTime(a)) + ", first " + millisecondsText(*firstTime(b)) + " against " +
               millisecondsText(*firstTime(a)) + ")";
  }
  return head + ": the order changed (" + swaps +
         "); differences smaller than that spread are ties of the timer: look before publishing the order";
}

std::optional<double> referenceTime(const json& reference, const std::string& variant) {
  if (!reference.is_object() || !reference.contains("variants")) return std::nullopt;
  for (const json& v : reference["variants"])
    if (v.value("id", "") == variant) {
      const json& times = v.value("opTimeSeconds", json::object());
      if (times.contains(batchKey()) && times[batchKey()].is_number()) return times[batchKey()].get<double>();
    }
  return std::nullopt;
}

// The time of the table's row with `role` among the reference lines (none when no row has it).
std::optional<double> referenceTimeOf(const json& reference, VariantRole role) {
  const ConvVariant* row = variantWithRole(role);
  return row ? referenceTime(reference, row->id) : std::nullopt;
}

void replaceAll(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

bool wordCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// `from` replaced where it stands as a whole token: not where it is part of a longer word (an id
// "ed" inside "expected" stays, which would otherwise give the id away by the word around it).
void replaceWholeTokens(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos;) {
    const size_t end = at + from.size();
    const bool startsToken = at == 0 || !wordCharacter(text[at - 1]) || !wordCharacter(from.front());
    const bool endsToken = end == text.size() || !wordCharacter(text[end]) || !wordCharacter(from.back());
    if (startsToken && endsToken) {
      text.replace(at, from.size(), to);
      at = text.find(from, at + to.size());
    } else {
      at = text.find(from, at + 1);
    }
  }
}

// A file that maps pseudonyms back to students (the secret, the mapping): its owner's alone. One
// that others could read has already told them: refused, with what to do, on every run.
void requireOwnerOnly(const std::filesystem::path& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return;
  if ((info.st_mode & 077) == 0) return;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  throw Error(file.string() + ": others can read it (mode " + mode +
              "), and it maps the pseudonyms back to students: make it the owner's alone (chmod 600 " + file.string() +
              "), or, if anyone may have read it, delete both .anonymize-secret and "
              "pseudonyms.csv in " +
              file.parent_path().string() + " for new pseudonyms");
}

// id -> pseudonym: a keyed hash under the results folder's own secret, written beside it, both
// readable by their owner alone.
std::map<std::string, std::string> pseudonyms(const std::filesystem::path& results,
                                              const std::vector<std::string>& ids) {
  const std::filesystem::path secretFile = results / ".anonymize-secret";
  const std::filesystem::path mappingFile = results / "pseudonyms.csv";
  requireOwnerOnly(secretFile);
  requireOwnerOnly(mappingFile);
  uint64_t key0 = 0, key1 = 0;
  if (std::filesystem::exists(secretFile)) {
    std::istringstream in(readWholeFile(secretFile));
    std::string a, b;
    in >> a >> b;
    try {
      key0 = std::stoull(a, nullptr, 16);
      key1 = std::stoull(b, nullptr, 16);
    } catch (const std::exception&) {
      throw Error(secretFile.string() + ": not two hexadecimal numbers (delete it to make a new secret)");
    }
  } else {
    key0 = secureRandom64();
    key1 = secureRandom64();
    writeFileAtomically(secretFile, hex64(key0) + " " + hex64(key1) + "\n", 0600);
  }
  std::map<std::string, std::string> names;
  std::string mapping = "id,pseudonym\n";
  for (const std::string& id : ids) {
    names[id] = "student-" + hex64(sipHash24(id, key0, key1)).substr(0, 10);
    mapping += id + "," + names[id] + "\n";
  }
  writeFileAtomically(mappingFile, mapping, 0600);
  return names;
}

std::string numberText(const json& value, int digits = 6) {
  if (!value.is_number()) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value.get<double>());
  return buffer;
}

std::string htmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The class's op-time sums at the ranking batch as dots on a log axis, the course's variants and
// cuDNN as vertical lines: where the class stands against what the course built.
std::string distributionSvg(const LeaderboardGroup& group) {
  std::vector<std::pair<std::string, double>> times;  // each dot's name (id or pseudonym) and time
  for (const json& row : group.rows)
    if (const auto t = rankingTime(row); t && *t > 0) times.emplace_back(row["id"].get<std::string>(), *t);
  std::vector<std::pair<std::string, double>> lines;
  if (group.reference.is_object() && group.reference.contains("variants"))
    for (const json& v : group.reference["variants"])
      if (const auto t = referenceTime(group.reference, v.value("id", "")); t && *t > 0)
        lines.emplace_back(v.value("displayName", v.value("id", "")), *t);
  std::ostringstream svg;
  if (times.empty() && lines.empty())
    return "<p class=\"note\">No op times to draw: no submission of this table was timed.</p>";
  double low = 1e300, high = 0;
  for (const auto& [id, t] : times) low = std::min(low, t), high = std::max(high, t);
  for (const auto& [name, t] : lines) low = std::min(low, t), high = std::max(high, t);
  const double logLow = std::log10(low) - 0.1, logHigh = std::log10(high) + 0.1;
  const int width = 900, left = 40, right = 860, height = 60 + 16 * int(lines.size()) + 40;
  const auto x = [&](double t) { return left + (right - left) * (std::log10(t) - logLow) / (logHigh - logLow); };
  // Scaled to the page's width (a phone's too), its own coordinates kept.
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << width << " " << height
      << "\" style=\"width:100%;max-width:" << width << "px\" role=\"img\" aria-label=\"op-time sums at batch "
      << batchKey() << ", one dot per timed submission\">\n";
  svg << "<line x1=\"" << left << "\" y1=\"40\" x2=\"" << right << "\" y2=\"40\" stroke=\"#888\"/>\n";
  for (int decade = int(std::ceil(logLow)); decade <= int(std::floor(logHigh)); ++decade) {
    const double px = x(std::pow(10.0, decade));
    svg << "<line x1=\"" << px << "\" y1=\"36\" x2=\"" << px << "\" y2=\"44\" stroke=\"#888\"/><text x=\"" << px
        << "\" y=\"56\" font-size=\"10\" text-anchor=\"middle\">" << millisecondsText(std::pow(10.0, decade))
        << "</text>\n";
  }
  // Each dot names its submission and time on hover (and to a screen reader).
  for (const auto& [id, t] : times)
    svg << "<circle class=\"submission\" cx=\"" << x(t)
        << "\" cy=\"30\" r=\"5\" fill=\"#1f77b4\" fill-opacity=\"0.6\"><title>" << htmlEscape(id) << ": "
        << millisecondsText(t) << "</title></circle>\n";
  int row = 0;
  for (const auto& [name, t] : lines) {
    const double px = x(t);
    const int y = 70 + 16 * row++;
    svg << "<line class=\"reference\" x1=\"" << px << "\" y1=\"10\" x2=\"" << px << "\" y2=\"" << y
        << "\" stroke=\"#d62728\" stroke-dasharray=\"3,2\"/><text x=\"" << px + 3 << "\" y=\"" << y
        << "\" font-size=\"10\">" << htmlEscape(name) << "</text>\n";
  }
  svg << "</svg>";
  return svg.str();
}

// RESULTS/publication.json: how the board is published (anonymized, title), kept between runs.
json readPublication(const std::filesystem::path& results) {
  const std::filesystem::path file = results / "publication.json";
  if (!std::filesystem::exists(file)) return json::object();
  json recorded = parseJsonText(readWholeFile(file), file.string());
  if (!recorded.is_object()) throw Error(file.string() + ": not a JSON object (delete it, and say --anonymize or not)");
  if (recorded.contains("anonymized") && !recorded["anonymized"].is_boolean())
    throw Error(file.string() +
                ": no \"anonymized\": true or false in it (say --anonymize or --no-anonymize to "
                "record the choice again)");
  if (recorded.contains("title") && !recorded["title"].is_string())
    throw Error(file.string() + ": \"title\" is not a string (say --title again)");
  return recorded;
}

void recordPublication(const std::filesystem::path& results, const std::string& key, const json& value) {
  json recorded = readPublication(results);
  recorded["schema"] = kClassResultsSchema;
  recorded[key] = value;
  writeFileAtomically(results / "publication.json", recorded.dump(2) + "\n");
}

}  // namespace

namespace {

// A row as published anonymized: the submission's file (a folder submission's file name may be
// the student's name), then every id of the class, each as a whole token, become pseudonyms.
json anonymizedRow(json row, const json& submission, const std::map<std::string, std::string>& names) {
  const std::string id = submission["id"].get<std::string>();
  const std::string& pseudonym = names.at(id);
  std::string message = row["message"].get<std::string>();
  const std::string file = submission.value("file", std::string());
  if (!file.empty()) {
    replaceAll(message, file, pseudonym + ".cu");
    const std::string fileName = std::filesystem::path(file).filename().string();
    if (fileName != file) replaceWholeTokens(message, fileName, pseudonym + ".cu");
  }
  // Longer ids first: "ann-marie" goes whole before "ann" could take its start.
  std::vector<std::pair<std::string, std::string>> byLength(names.begin(), names.end());
  std::stable_sort(byLength.begin(), byLength.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [other, name] : byLength) replaceWholeTokens(message, other, name);
  row["id"] = pseudonym;
  row["message"] = message;
  return row;
}

}  // namespace

Leaderboard buildLeaderboard(const std::filesystem::path& results, bool anonymize) {
  Leaderboard board;
  board.anonymized = anonymize;
  board.title = readPublication(results).value("title", std::string());
  {
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    board.mergedAt = stamp;
  }
  json reference = nullptr;
  if (std::filesystem::exists(results / "reference.json")) {
    try {
      reference = parseJsonText(readWholeFile(results / "reference.json"), (results / "reference.json").string());
    } catch (const std::exception& e) {
      board.unreadable.push_back({{"file", "reference.json"}, {"reason", e.what()}});
    }
  }
  // What the grader found in DIR that is no submission (skipped.json, written by grade).
  if (std::filesystem::exists(results / "skipped.json")) {
    try {
      const json skipped = parseJsonText(readWholeFile(results / "skipped.json"), (results / "skipped.json").string());
      for (const json& s : skipped.value("skipped", json::array())) board.skipped.push_back(s);
    } catch (const std::exception& e) {
      board.unreadable.push_back({{"file", "skipped.json"}, {"reason", e.what()}});
    }
  }
  std::vector<json> submissions;
  const std::filesystem::path folder = results / "submissions";
  if (std::filesystem::is_directory(folder)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      try {
        json s = parseJsonText(readWholeFile(file), file.string());
        if (!s.is_object() || !s.contains("schema") || s["schema"] != kClassResultsSchema || !s.contains("id") ||
            !s.contains("status"))
          throw Error(file.string() + ": not a submission result of schema " + std::to_string(kClassResultsSchema));
        // A foreign or hand-edited file: its fields must have the types the ranking reads.
        for (const char* key : {"id", "status", "message", "gradedAt"})
          if (s.contains(key) && !s[key].is_string()) throw Error(file.string() + ": \"" + key + "\" is not a string");
        if (s.contains("gpu") && s["gpu"].is_object() && s["gpu"].contains("name") && !s["gpu"]["name"].is_string())
          throw Error(file.string() + ": the GPU's \"name\" is not a string");
        if (s.contains("opTimeSeconds") && !s["opTimeSeconds"].is_object())
          throw Error(file.string() + ": \"opTimeSeconds\" is not an object of batch: seconds");
        // The compile's second wall (submitted_kernel.h): said once per reason in the header.
        if (const json sandbox = s.value("sandbox", json()); sandbox.is_object() && !sandbox.value("enforced", true)) {
          const std::string reason = sandbox.value("reason", std::string("the grading machine has no Landlock"));
          if (std::find(board.withoutSecondWall.begin(), board.withoutSecondWall.end(), reason) ==
              board.withoutSecondWall.end())
            board.withoutSecondWall.push_back(reason);
        }
        submissions.push_back(std::move(s));
      } catch (const std::exception& e) {
        board.unreadable.push_back({{"file", file.filename().string()}, {"reason", e.what()}});
      }
    }
  }
  std::map<std::string, std::string> names;
  if (anonymize) {
    std::vector<std::string> ids;
    for (const json& s : submissions) ids.push_back(s["id"].get<std::string>());
    names = pseudonyms(results, ids);
  }
  const Retimings retimings = readRetimings(results, board.unreadable);
  // Results from different GPUs are never ranked together: one table per GPU.
  std::map<std::string, LeaderboardGroup> byGpu;
  for (const json& s : submissions) {
    const std::string gpu = s.contains("gpu") && s["gpu"].is_object() ? s["gpu"].value("name", "") : "";
    LeaderboardGroup& group = byGpu[gpu];
    group.gpu = gpu;
    json row = {{"id", s["id"]},
                {"status", s["status"]},
                {"message", s.value("message", "")},
                {"accuracy", s.value("accuracy", json(nullptr))},
                {"opTimeSeconds", s.value("opTimeSeconds", json::object())},
                {"registers", s.value("registers", json(nullptr))},
                {"occupancy", s.value("occupancy", json(nullptr))},
                {"gradedAt", s.value("gradedAt", "")},
                {"retimedSeconds", nullptr}};
    // Its re-timing counts when taken on this table's GPU on the file as graded.
    if (const auto found = retimings.byId.find(s["id"]);
        !gpu.empty() && gpu == retimings.gpu && found != retimings.byId.end() && countsAsPassed(s["status"]) &&
        found->second["contentHash"] == s.value("contentHash", json())) {
      const json& entry = found->second;
      if (entry.contains("seconds") && entry["seconds"].is_number()) {
        row["retimedSeconds"] = entry["seconds"];
      } else {
        row["status"] = kGradeFlagged;
        row["message"] = row["message"].get<std::string>() +
                         "; its re-timing failed: " + entry["failure"].get<std::string>() +
                         ": flagged for review, not ranked";
      }
    }
    if (anonymize) row = anonymizedRow(std::move(row), s, names);
    group.rows.push_back(std::move(row));
  }
  for (auto& [gpu, group] : byGpu) {
    const bool referenceHere = !gpu.empty() && reference.is_object() && reference.contains("gpu") &&
                               reference["gpu"].is_object() && reference["gpu"].value("name", "") == gpu;
    group.reference = referenceHere ? reference : json(nullptr);
    // The statuses that count as passed rank together, by time; the others follow in statusOrder.
    const auto standing = [](const json& row) {
      return countsAsPassed(row["status"]) ? -1 : statusOrder(row["status"]);
    };
    std::stable_sort(group.rows.begin(), group.rows.end(), [&](const json& a, const json& b) {
      const int sa = standing(a), sb = standing(b);
      if (sa != sb) return sa < sb;
      const auto ta = rankingTime(a), tb = rankingTime(b);
      if (ta && tb && *ta != *tb) return *ta < *tb;
      if (ta.has_value() != tb.has_value()) return ta.has_value();
      return a["id"].get<std::string>() < b["id"].get<std::string>();
    });
    const auto baseline = referenceTimeOf(group.reference, VariantRole::kCourseBaseline);
    const auto cudnn = referenceTimeOf(group.reference, VariantRole::kVendorLibrary);
    int rank = 0;
    for (json& row : group.rows) {
      row["rank"] = ++rank;
      const auto time = rankingTime(row);
      row["speedupOverGpuBaseline"] = time && baseline && *time > 0 ? json(*baseline / *time) : json(nullptr);
      row["speedupOverCudnn"] = time && cudnn && *time > 0 ? json(*cudnn / *time) : json(nullptr);
      if (countsAsPassed(row["status"])) {
        ++group.correct;
        if (time && cudnn && *time < *cudnn) ++group.correctAndFasterThanCudnn;
      }
    }
    group.retimeSummary = retimeSummaryOf(group.rows);
    group.summary = std::to_string(group.rows.size()) + " submissions: " + std::to_string(group.correct) +
                    " correct, " + std::to_string(group.correctAndFasterThanCudnn) + " correct and faster than cuDNN" +
                    (gpu.empty() ? " (graded without a GPU)" : " on " + gpu);
    board.groups.push_back(group);
  }
  return board;
}

bool publishAnonymized(const std::filesystem::path& results, std::optional<bool> asked) {
  if (asked) {
    recordPublication(results, "anonymized", *asked);
    return *asked;
  }
  return readPublication(results).value("anonymized", false);
}

void recordLeaderboardTitle(const std::filesystem::path& results, const std::string& title) {
  if (title.size() > 200 || title.find_first_of("\n\r") != std::string::npos)
    throw Error("grade: --title '" + title.substr(0, 40) + "...': one line of at most 200 characters");
  recordPublication(results, "title", title);
}

SubmissionSource submissionSource(const std::filesystem::path& results, const std::string& id) {
  SubmissionSource source;
  const std::filesystem::path resultFile = results / "submissions" / (id + ".json");
  json result;
  try {
    result = parseJsonText(readWholeFile(resultFile), resultFile.string());
  } catch (const std::exception& e) {
    source.problem = e.what();
    return source;
  }
  const std::string path = result.value("path", "");
  if (path.empty()) {
    source.problem = resultFile.string() + ": does not say where " + id +
                     "'s file is (graded by an older ConvScope: grade it again)";
    return source;
  }
  if (!std::filesystem::is_regular_file(path)) {
    source.problem = id + "'s file " + path + " is gone (named by " + resultFile.string() + ")";
    return source;
  }
  source.file = path;
  return source;
}

json leaderboardToJson(const Leaderboard& board) {
  json groups = json::array();
  for (const LeaderboardGroup& g : board.groups)
    groups.push_back({{"gpu", g.gpu.empty() ? json(nullptr) : json(g.gpu)},
                      {"summary", g.summary},
                      {"submissions", g.rows.size()},
                      {"correct", g.correct},
                      {"correctAndFasterThanCudnn", g.correctAndFasterThanCudnn},
                      {"reference", g.reference},
                      {"retimeSummary", g.retimeSummary},
                      {"rows", g.rows}});
  return {{"schema", kClassResultsSchema},
          {"kind", "convscope-class-leaderboard"},
          {"rankingBatch", kGradeBatches.back()},
          {"anonymized", board.anonymized},
          {"groups", groups},
          // An unreadable result's or a skipped entry's name may be a student's id: the anonymized
          // board gives only their counts.
          {"unreadable", board.anonymized ? json(nullptr) : json(board.unreadable)},
          {"unreadableCount", board.unreadable.size()},
          {"skipped", board.anonymized ? json(nullptr) : json(board.skipped)},
          {"skippedCount", board.skipped.size()},
          {"withoutSecondWall", board.withoutSecondWall}};
}

namespace {

// One row (or a reference variant) of a published board, in the form the window reads: strings
// where it reads strings, numbers or null where numbers, every field present.
json checkedBoardRow(const json& row, const std::string& where, bool variant) {
  if (!row.is_object()) throw Error(where + " is not an object");
  json checked = row;
  const auto string = [&](const char* field, bool required) {
    if (!row.contains(field) && !required) return;
    if (!row.contains(field) || !row[field].is_string())
      throw Error(where + ": \"" + field + "\" is " + (row.contains(field) ? "not text" : "missing"));
  };
  const auto number = [&](const char* field) {
    if (!row.contains(field))
      checked[field] = nullptr;
    else if (!row[field].is_null() && !row[field].is_number())
      throw Error(where + ": \"" + field + "\" is not a number");
  };
  string("id", true);
  if (variant) {
    string("displayName", false);
  } else {
    string("status", true);
    string("message", false);
    if (!row.contains("rank")) throw Error(where + ": \"rank\" is missing");
    try {
      checked["rank"] = jsonWholeNumber(row["rank"], "rank", 1, 1'000'000);
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
    for (const char* field :
         {"accuracy", "retimedSeconds", "speedupOverGpuBaseline", "speedupOverCudnn", "registers", "occupancy"})
      number(field);
  }
  if (!row.contains("opTimeSeconds")) {
    checked["opTimeSeconds"] = json::object();
  } else if (!row["opTimeSeconds"].is_object()) {
    throw Error(where + ": \"opTimeSeconds\" is not an object");
  } else {
    for (const auto& [batch, seconds] : row["opTimeSeconds"].items())
      if (!seconds.is_null() && !seconds.is_number())
        throw Error(where + ": \"opTimeSeconds\" at batch " + batch + " is not a number");
  }
  return checked;
}

}  // namespace

Leaderboard readPublishedLeaderboard(const std::filesystem::path& file) {
  const json document =
      parseJsonText(readWholeFile(file, kPublishedLeaderboardMaxBytes, "a leaderboard"), file.string());
  const std::string name = file.string();
  if (!document.is_object() || document.value("kind", json()) != "convscope-class-leaderboard")
    throw Error(name + ": not a ConvScope leaderboard (its \"kind\" is not \"convscope-class-leaderboard\")");
  if (document.value("schema", json()) != kClassResultsSchema)
    throw Error(name + ": a leaderboard of another version (schema " + document.value("schema", json()).dump() +
                "; this ConvScope reads " + std::to_string(kClassResultsSchema) + ")");
  if (!document.contains("groups") || !document["groups"].is_array())
    throw Error(name + ": \"groups\" is missing or not a list");
  Leaderboard board;
  const json anonymized = document.value("anonymized", json(false));
  board.anonymized = anonymized.is_boolean() && anonymized.get<bool>();
  for (size_t g = 0; g < document["groups"].size(); ++g) {
    const json& group = document["groups"][g];
    const std::string where = name + ": table " + std::to_string(g + 1);
    if (!group.is_object()) throw Error(where + " is not an object");
    LeaderboardGroup read;
    if (group.contains("gpu") && !group["gpu"].is_null() && !group["gpu"].is_string())
      throw Error(where + ": \"gpu\" is not text");
    read.gpu = group.value("gpu", json()).is_string() ? group["gpu"].get<std::string>() : std::string();
    for (const char* field : {"summary", "retimeSummary"})
      if (group.contains(field) && !group[field].is_string()) throw Error(where + ": \"" + field + "\" is not text");
    read.summary = group.value("summary", std::string());
    read.retimeSummary = group.value("retimeSummary", std::string());
    if (!group.contains("rows") || !group["rows"].is_array())
      throw Error(where + ": \"rows\" is missing or not a list");
    for (size_t r = 0; r < group["rows"].size(); ++r)
      read.rows.push_back(checkedBoardRow(group["rows"][r], where + ", row " + std::to_string(r + 1), false));
    for (const json& row : read.rows) {
      read.correct += countsAsPassed(row["status"]);
      const json& speedup = row["speedupOverCudnn"];
      read.correctAndFasterThanCudnn +=
          countsAsPassed(row["status"]) && speedup.is_number() && speedup.get<double>() > 1.0;
    }
    const json reference = group.value("reference", json());
    if (reference.is_object()) {
      read.reference = reference;
      if (reference.contains("timedAt") && !reference["timedAt"].is_string())
        throw Error(where + ": the reference's \"timedAt\" is not text");
      if (reference.contains("variants")) {
        if (!reference["variants"].is_array()) throw Error(where + ": the reference's \"variants\" is not a list");
        for (size_t v = 0; v < reference["variants"].size(); ++v)
          read.reference["variants"][v] =
              checkedBoardRow(reference["variants"][v], where + ", reference variant " + std::to_string(v + 1), true);
      }
    } else if (!reference.is_null()) {
      throw Error(where + ": \"reference\" is not an object");
    }
    board.groups.push_back(std::move(read));
  }
  return board;
}

std::string leaderboardCsv(const Leaderboard& board) {
  std::string csv = "gpu,rank,id,status,message,accuracy";
  for (int b : kGradeBatches) csv += ",op_time_" + std::to_string(b) + "_s";
  csv += ",retimed_" + batchKey() + "_s,speedup_over_gpu_baseline,speedup_over_cudnn,registers,occupancy\n";
  for (const LeaderboardGroup& g : board.groups)
    for (const json& row : g.rows) {
      csv += csvField(g.gpu.empty() ? "no GPU" : g.gpu) + "," + std::to_string(row["rank"].get<int>()) + "," +
             csvField(row["id"]) + "," + csvField(row["status"]) + "," + csvField(row["message"]) + "," +
             numberText(row["accuracy"]);
      for (int b : kGradeBatches) {
        csv += ',';
        csv += numberText(row["opTimeSeconds"].value(std::to_string(b), json()));
      }
      for (const char* field :
           {"retimedSeconds", "speedupOverGpuBaseline", "speedupOverCudnn", "registers", "occupancy"}) {
        csv += ',';
        csv += numberText(row[field]);
      }
      csv += '\n';
    }
  return csv;
}

// A cell of seconds shown in milliseconds (the number alone, so that the column sorts); empty
// when there is none.
static std::string millisecondsCell(const json& seconds) {
  if (!seconds.is_number()) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", seconds.get<double>() * 1e3);
  return buffer;
}

std::string leaderboardHtml(const Leaderboard& board) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>"
       << htmlEscape(board.title.empty() ? "Class leaderboard" : board.title) << " (ConvScope)</title>\n"
       << "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
          "th,td{border:1px solid #ccc;padding:3px 6px;font-size:13px}th{cursor:pointer;background:#eee}"
          "td.num{text-align:right}.note{color:#555}.scroll{overflow-x:auto}"
          "@media (max-width:600px){body{margin:0.5em}td,th{font-size:12px}}</style></head><body>\n"
       << "<h1>" << htmlEscape(board.title.empty() ? "Class leaderboard" : board.title) << "</h1>\n"
       << "<p class=\"merged\">Merged " << htmlEscape(board.mergedAt) << ".</p>\n"
       << "<p class=\"note\">Ranked: correct first, then the sum of the conv layers' op "
          "times at batch "
       << batchKey()
       << " (the top of the ranking is timed a second time once the whole class is graded, to confirm its "
          "order: the line under a table's summary says whether it held). Results from different GPUs are never ranked "
          "together: one table per GPU. Click a column "
          "title to sort.</p>\n";
  for (const std::string& reason : board.withoutSecondWall)
    html << "<p class=\"warning\">The students' kernels were compiled without the second wall (the compiler's "
            "process could not shut itself off from the machine's files: "
         << htmlEscape(reason) << "); only the #include filter stood between them and the grading machine.</p>\n";
  if (board.groups.size() > 1)
    html << "<p class=\"note\">These results come from " << board.groups.size()
         << " different machines (GPUs), so they are shown in separate tables.</p>\n";
  if (!board.skipped.empty()) {
    html << "<p class=\"note\">" << board.skipped.size() << " entries of the submissions folder are no submission";
    if (board.anonymized) {
      html << " (not named here: the leaderboard is anonymized).</p>\n";
    } else {
      html << ":</p>\n<ul class=\"skipped\">";
      for (const json& s : board.skipped)
        html << "<li>" << htmlEscape(s.value("path", "")) << ": " << htmlEscape(s.value("reason", "")) << "</li>";
      html << "</ul>\n";
    }
  }
  int tableIndex = 0;
  for (const LeaderboardGroup& g : board.groups) {
    html << "<h2>" << htmlEscape(g.gpu.empty() ? "Graded without a GPU" : g.gpu) << "</h2>\n<p class=\"summary\">"
         << htmlEscape(g.summary) << "</p>\n";
    if (!g.retimeSummary.empty()) html << "<p class=\"retime\">" << htmlEscape(g.retimeSummary) << "</p>\n";
    if (g.gpu.empty())
      html << "<p class=\"note\">No reference lines: these submissions were graded without a GPU, so neither they "
              "nor the course's variants were timed.</p>\n";
    else if (g.reference.is_null())
      html << "<p class=\"note\">No reference lines: the course's variants were not timed on this GPU in this "
              "results folder.</p>\n";
    html << distributionSvg(g) << "\n<div class=\"scroll\"><table id=\"t" << tableIndex++
         << "\" class=\"leaderboard\"><thead><tr>";
    std::vector<std::string> titles = {"rank", board.anonymized ? "pseudonym" : "id", "status", "message", "accuracy"};
    for (int b : kGradeBatches) titles.push_back("op time at " + std::to_string(b) + " (ms)");
    titles.push_back("re-timed at " + batchKey() + " (ms)");
    for (const char* t : {"speed-up over GPU baseline", "speed-up over cuDNN", "registers", "occupancy"})
      titles.push_back(t);
    for (const std::string& t : titles) html << "<th>" << htmlEscape(t) << "</th>";
    html << "</tr></thead><tbody>\n";
    for (const json& row : g.rows) {
      html << "<tr><td class=\"num\">" << row["rank"].get<int>() << "</td><td>"
           << htmlEscape(row["id"].get<std::string>()) << "</td><td>" << htmlEscape(row["status"].get<std::string>())
           << "</td><td>" << htmlEscape(row["message"].get<std::string>()) << "</td><td class=\"num\">"
           << numberText(row["accuracy"]) << "</td>";
      for (int b : kGradeBatches)
        html << "<td class=\"num\">" << millisecondsCell(row["opTimeSeconds"].value(std::to_string(b), json()))
             << "</td>";
      html << "<td class=\"num\">" << millisecondsCell(row["retimedSeconds"]) << "</td>";
      html << "<td class=\"num\">" << numberText(row["speedupOverGpuBaseline"], 3) << "</td><td class=\"num\">"
           << numberText(row["speedupOverCudnn"], 3) << "</td><td class=\"num\">" << numberText(row["registers"])
           << "</td><td class=\"num\">" << numberText(row["occupancy"], 3) << "</td></tr>\n";
    }
    html << "</tbody></table></div>\n";
  }
  // Sorting by a click on a column title: numbers as numbers, empty cells last.
  html << "<script>\nfor (const table of document.querySelectorAll('table.leaderboard')) {\n"
          "  table.querySelectorAll('th').forEach((th, column) => th.addEventListener('click', () => {\n"
          "    const body = table.tBodies[0];\n"
          "    const up = th.dataset.order !== 'up'; th.dataset.order = up ? 'up' : 'down';\n"
          "    const key = r => r.cells[column].textContent;\n"
          "    const rows = Array.from(body.rows).sort((a, b) => {\n"
          "      const x = key(a), y = key(b);\n"
          "      if (x === '' || y === '') return (x === '') - (y === '');\n"
          "      const d = (isNaN(x) || isNaN(y)) ? x.localeCompare(y) : x - y;\n"
          "      return up ? d : -d; });\n"
          "    rows.forEach(r => body.appendChild(r)); }));\n}\n</script>\n</body></html>\n";
  return html.str();
}

void writeLeaderboard(const std::filesystem::path& results, const Leaderboard& board) {
  writeFileAtomically(results / "leaderboard.json", leaderboardToJson(board).dump(2) + "\n");
  writeFileAtomically(results / "leaderboard.csv", leaderboardCsv(board));
  writeFileAtomically(results / "leaderboard.html", leaderboardHtml(board));
}

}  // namespace convscope
