// CSV fields as every CSV file ConvScope writes spells them (RFC 4180): quoted, with the quotes
// doubled, where the text holds a comma, a quote or a line end -- ImageNet's class names
// ("tench, Tinca tinca"), students' messages -- and as it is otherwise.
#pragma once

#include <string>

namespace convscope {

// The text in quotes, its quotes doubled, whatever it holds.
inline std::string quotedCsvField(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// The text, quoted only where it must be.
inline std::string csvField(const std::string& text) {
  return text.find_first_of(",\"\n\r") == std::string::npos ? text : quotedCsvField(text);
}

}  // namespace convscope
