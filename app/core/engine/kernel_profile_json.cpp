#include "app/core/engine/kernel_profile_json.h"

#include <nlohmann/json.hpp>

#include "app/core/util/atomic_file.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/json_file.h"

namespace convscope {
namespace {

using nlohmann::json;
constexpr const char* kSchema = "convscope-profile/1";

double nonNegative(const json& row, const char* field, size_t index) {
  const double value = row.at(field).get<double>();
  if (!(value >= 0.0))  // NaN fails too
    throw Error("row " + std::to_string(index) + ": \"" + field + "\" is " + std::to_string(value) +
                ", a time cannot be negative");
  return value;
}

}  // namespace

void writeKernelProfileJson(const KernelProfile& profile, const std::filesystem::path& path) {
  json rows = json::array();
  for (const KernelRow& r : profile.rows)
    rows.push_back({{"name", r.name},
                    {"is_copy", r.isCopy},
                    {"calls", r.calls},
                    {"total_ms", r.totalMs},
                    {"min_ms", r.minMs},
                    {"max_ms", r.maxMs},
                    {"share", r.share}});
  const json document = {{"schema", kSchema},
                         {"variant", profile.variant},
                         {"model", profile.model},
                         {"device", profile.device},
                         {"date", profile.date},
                         {"batch", profile.batch},
                         {"rows", rows}};
  writeFileAtomically(path, document.dump(2) + "\n");
}

KernelProfile readKernelProfileJson(const std::filesystem::path& path) {
  // A profile is a few kB; the limit keeps a wrong file (or a device) from being read whole.
  InputFile file(path, "a profile file", uint64_t{64} << 20);
  const std::string text = file.readAll();
  try {
    const json j = parseJsonText(text, path.string());
    if (!j.is_object() || j.value("schema", "") != kSchema)
      throw Error(std::string("not a ConvScope profile (schema ") + kSchema + ")");
    KernelProfile profile;
    profile.variant = j.at("variant").get<std::string>();
    profile.model = j.at("model").get<std::string>();
    profile.device = j.at("device").get<std::string>();
    profile.date = j.value("date", "");
    profile.batch = jsonWholeNumber(j.at("batch"), "batch", 1, int64_t{1} << 30);
    const json& rows = j.at("rows");
    if (!rows.is_array() || rows.empty()) throw Error("\"rows\" holds no kernels");
    for (size_t i = 0; i < rows.size(); ++i) {
      const json& r = rows[i];
      KernelRow row;
      row.name = r.at("name").get<std::string>();
      row.isCopy = r.value("is_copy", false);
      try {
        row.calls = jsonWholeNumber(r.at("calls"), "calls", 1, int64_t{1} << 30);
      } catch (const Error& e) {
        throw Error("row " + std::to_string(i) + ": " + e.what());
      }
      row.totalMs = nonNegative(r, "total_ms", i);
      row.minMs = nonNegative(r, "min_ms", i);
      row.maxMs = nonNegative(r, "max_ms", i);
      if (row.minMs > row.maxMs) throw Error("row " + std::to_string(i) + ": \"min_ms\" is above \"max_ms\"");
      row.share = nonNegative(r, "share", i);
      if (row.share > 1.0) throw Error("row " + std::to_string(i) + ": \"share\" is above 1 (a fraction of 0..1)");
      profile.rows.push_back(std::move(row));
    }
    return profile;
  } catch (const json::exception& e) {
    throw Error(path.string() + ": not a readable profile: " + describeJsonFieldError(e));
  } catch (const Error& e) {
    // parseJsonText's messages name the file already.
    const std::string message = e.what();
    if (message.rfind(path.string(), 0) == 0) throw;
    throw Error(path.string() + ": " + message);
  }
}

}  // namespace convscope
