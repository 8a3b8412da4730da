// JSON files read from disk (benchmarks, profiles, model cards), with errors in the user's words
// rather than the library's: "FILE is empty", "FILE is not JSON: line L, column C: ...",
// "FILE: field "X" missing".
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace convscope {

// Parses `text`, the contents of the file `name`. Throws convscope::Error naming the file when
// the text is empty (or only white space) or is not JSON, with the line and column of the fault.
nlohmann::json parseJsonText(const std::string& text, const std::string& name);

// What a nlohmann::json exception thrown while reading a parsed document's fields means, without
// the library's prefix: a missing field by name, a value of the wrong type.
std::string describeJsonFieldError(const nlohmann::json::exception& error);

// `value` (the field `field` of a document) as a whole number from `low` to `high`; throws
// convscope::Error saying the field, the value and the range otherwise. A count in a file from
// another machine is checked before use: a float beyond int's range converts with undefined
// behaviour, a stride of 0 divides by zero, sizes of 2^30 overflow every product.
int jsonWholeNumber(const nlohmann::json& value, const std::string& field, int64_t low, int64_t high);

}  // namespace convscope
