#include "app/core/util/json_file.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "app/core/util/error.h"

namespace convscope {

namespace {

// nlohmann's messages start "[json.exception.<kind>.<id>] "; the rest is readable.
std::string withoutLibraryPrefix(const std::string& message) {
  if (message.rfind("[json.exception.", 0) != 0) return message;
  const size_t end = message.find("] ");
  return end == std::string::npos ? message : message.substr(end + 2);
}

}  // namespace

nlohmann::json parseJsonText(const std::string& text, const std::string& name) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
    throw Error(name + " is empty");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // "parse error at line 3, column 7: syntax error while parsing ..." -> "line 3, column 7: ..."
    std::string detail = withoutLibraryPrefix(e.what());
    const std::string lead = "parse error at ";
    if (detail.rfind(lead, 0) == 0) detail = detail.substr(lead.size());
    throw Error(name + " is not JSON: " + detail);
  } catch (const nlohmann::json::exception& e) {
    // Not a syntax error but a value the parser cannot hold: "number overflow parsing '1e999'".
    throw Error(name + " is not JSON that can be read: " + withoutLibraryPrefix(e.what()));
  }
}

std::string describeJsonFieldError(const nlohmann::json::exception& error) {
  const std::string detail = withoutLibraryPrefix(error.what());
  // out_of_range.403: "key 'model' not found"
  static const std::regex missingKey("key '([^']*)' not found");
  std::smatch match;
  if (std::regex_search(detail, match, missingKey)) return "field \"" + match[1].str() + "\" missing";
  // type_error.302: "type must be number, but is string"
  if (detail.rfind("type must be ", 0) == 0) return "a field of the wrong type (" + detail + ")";
  return detail;
}

int jsonWholeNumber(const nlohmann::json& value, const std::string& field, int64_t low, int64_t high) {
  const bool inRange = value.is_number_unsigned() ? value.get<uint64_t>() <= static_cast<uint64_t>(high) &&
                                                        static_cast<int64_t>(value.get<uint64_t>()) >= low
                       : value.is_number_integer() ? value.get<int64_t>() >= low && value.get<int64_t>() <= high
                                                   : false;
  if (!inRange)
    throw Error("\"" + field + "\" is " + value.dump() + ", not a whole number from " + std::to_string(low) + " to " +
                std::to_string(high));
  return static_cast<int>(value.get<int64_t>());
}

}  // namespace convscope
