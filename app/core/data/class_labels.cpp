#include "app/core/data/class_labels.h"

#include "app/core/util/error.h"
#include "app/core/util/input_file.h"

namespace convscope {
namespace {

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool isUtf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    int more = 0;
    uint32_t code = 0, least = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if ((byte & 0xE0) == 0xC0) {
      more = 1, code = byte & 0x1F, least = 0x80;
    } else if ((byte & 0xF0) == 0xE0) {
      more = 2, code = byte & 0x0F, least = 0x800;
    } else if ((byte & 0xF8) == 0xF0) {
      more = 3, code = byte & 0x07, least = 0x10000;
    } else {
      return false;
    }
    if (i + static_cast<size_t>(more) >= text.size()) return false;  // cut short by the line's end
    for (int k = 1; k <= more; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += static_cast<size_t>(more) + 1;
  }
  return true;
}

}  // namespace

std::vector<std::string> readLabelsFile(const std::filesystem::path& path) {
  InputFile file(path, "a labels file", kLabelsFileMaxBytes);
  const std::string text = file.readAll();
  const std::string& name = file.name();
  std::vector<std::string> names;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = name + ", line " + std::to_string(names.size() + 1);
    if (line.find('\0') != std::string::npos)
      throw Error(where + " holds a NUL byte: a labels file is text, one class name a line");
    if (!isUtf8(line)) throw Error(where + " is not UTF-8 text: a labels file is text, one class name a line");
    if (line.find_first_not_of(" \t") == std::string::npos)
      throw Error(where + " is empty: every line names one class, in the order of the model's outputs");
    if (names.size() == kMaxClassNames)
      throw Error(name + " names more than " + std::to_string(kMaxClassNames) + " classes");
    names.push_back(std::move(line));
    start = end + 1;
  }
  if (names.empty()) throw Error(name + " names no class: a labels file has one class name a line");
  return names;
}

}  // namespace convscope
