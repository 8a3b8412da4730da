#include "app/core/conv/kernel_includes.h"

#include <algorithm>
#include <cctype>

namespace convscope {
namespace {

// A line as the preprocessor sees it: physical lines joined where one ends in a backslash.
struct LogicalLine {
  int firstLine = 0;  // 1-based, of its first physical line
  std::string text;
};

// Trigraphs (??= is #, ??/ a backslash) are gone from C++17, but a compiler may still accept
// them: read them as that compiler would, so that they cannot hide a directive.
std::string withoutTrigraphs(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "?\?=") == 0) {
      out += '#';
      i += 2;
    } else if (text.compare(i, 3, "?\?/") == 0) {
      out += '\\';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::vector<LogicalLine> logicalLines(std::string_view raw) {
  const std::string text = withoutTrigraphs(raw);
  std::vector<LogicalLine> lines;
  LogicalLine current{1, {}};
  int physical = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      // A backslash, perhaps trailing blanks, then the end of the line: the line goes on.
      size_t j = i + 1;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
      if (j < text.size() && text[j] == '\n') {
        ++physical;
        i = j;
        continue;
      }
    }
    if (c == '\n') {
      lines.push_back(std::move(current));
      current = LogicalLine{++physical, {}};
      continue;
    }
    current.text += c;
  }
  lines.push_back(std::move(current));
  return lines;
}

// Past blanks and /* */ comments from `at`; npos at the line's end or where a comment runs on
// past it (nothing more of this line can matter then).
size_t skipBlanks(const std::string& s, size_t at) {
  while (at < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[at]);
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++at;
    } else if (s.compare(at, 2, "/*") == 0) {
      const size_t end = s.find("*/", at + 2);
      if (end == std::string::npos) return std::string::npos;
      at = end + 2;
    } else if (s.compare(at, 2, "//") == 0) {
      return std::string::npos;
    } else {
      return at;
    }
  }
  return std::string::npos;
}

bool isAllowed(const std::string& name, bool angle) {
  if (!angle) return name == kConvScopeKernelHeaderName;
  const auto& allowed = allowedKernelHeaders();
  return std::find(allowed.begin(), allowed.end(), name) != allowed.end();
}

std::string allowedList() {
  std::string list = "\"" + std::string(kConvScopeKernelHeaderName) + "\"";
  for (const std::string& name : allowedKernelHeaders()) list += ", <" + name + ">";
  return list;
}

// The header named at `at` ("<name>" or "\"name\""), as written; empty when it is not a written
// name (a macro: a computed include).
std::string headerNameAt(const std::string& s, size_t at, bool* angle) {
  if (at >= s.size() || (s[at] != '<' && s[at] != '"')) return {};
  *angle = s[at] == '<';
  const size_t end = s.find(*angle ? '>' : '"', at + 1);
  if (end == std::string::npos) return {};
  return s.substr(at, end - at + 1);
}

KernelDiagnostic refusal(const std::string& file, int line, const std::string& what) {
  return {file, line,
          what + " is refused: a kernel file may include only " + allowedList() +
              ", so that nothing else of the machine it is compiled on can be read (docs/your-kernel.md)"};
}

// The directive starting at `at` (a '#' or "%:" after blanks), if it names a file.
void checkDirective(const std::string& file, const LogicalLine& line, size_t at, std::vector<KernelDiagnostic>& out) {
  size_t i = skipBlanks(line.text, at);
  if (i == std::string::npos) return;
  if (line.text[i] == '#') {
    i += 1;
  } else if (line.text.compare(i, 2, "%:") == 0) {
    i += 2;
  } else {
    return;
  }
  i = skipBlanks(line.text, i);
  if (i == std::string::npos) return;
  size_t end = i;
  while (end < line.text.size() &&
         (std::isalnum(static_cast<unsigned char>(line.text[end])) || line.text[end] == '_' || line.text[end] == '\\'))
    ++end;
  const std::string directive = line.text.substr(i, end - i);
  if (directive.find('\\') != std::string::npos) {
    out.push_back(refusal(file, line.firstLine, "a directive written with escapes ('#" + directive + "')"));
    return;
  }
  if (directive != "include" && directive != "include_next" && directive != "import" && directive != "embed") return;
  const size_t nameAt = skipBlanks(line.text, end);
  bool angle = false;
  const std::string written = nameAt == std::string::npos ? std::string() : headerNameAt(line.text, nameAt, &angle);
  if (written.empty()) {
    out.push_back(
        refusal(file, line.firstLine, "#" + directive + " of a computed name (only a written <name> is allowed)"));
    return;
  }
  if (directive == "include" && isAllowed(written.substr(1, written.size() - 2), angle)) return;
  out.push_back(refusal(file, line.firstLine, "#" + directive + " " + written));
}

// __has_include(<name>) would tell whether any file exists; only the allowed names may be asked.
void checkHasInclude(const std::string& file, const LogicalLine& line, std::vector<KernelDiagnostic>& out) {
  static const std::string kToken = "__has_include";
  for (size_t at = line.text.find(kToken); at != std::string::npos; at = line.text.find(kToken, at + 1)) {
    size_t i = at + kToken.size();
    const bool next = line.text.compare(i, 5, "_next") == 0;
    if (next) i += 5;
    i = skipBlanks(line.text, i);
    bool angle = false;
    std::string written;
    if (i != std::string::npos && line.text[i] == '(') {
      const size_t nameAt = skipBlanks(line.text, i + 1);
      if (nameAt != std::string::npos) written = headerNameAt(line.text, nameAt, &angle);
    }
    const std::string name = "__has_include" + std::string(next ? "_next" : "");
    if (written.empty())
      out.push_back(refusal(file, line.firstLine, name + " of a computed name"));
    else if (next || !isAllowed(written.substr(1, written.size() - 2), angle))
      out.push_back(refusal(file, line.firstLine, name + "(" + written + ")"));
  }
}

}  // namespace

const std::vector<std::string>& allowedKernelHeaders() {
  static const std::vector<std::string> headers = {
      "mma.h",         "cuda_fp16.h",  "cuda_bf16.h", "cuda_fp8.h",    "cuda_pipeline.h", "cooperative_groups.h",
      "cuda/pipeline", "cuda/barrier", "cuda/atomic", "cuda/std/cmath"};
  return headers;
}

std::vector<KernelDiagnostic> refusedKernelIncludes(const std::string& file, std::string_view text) {
  std::vector<KernelDiagnostic> refused;
  for (const LogicalLine& line : logicalLines(text)) {
    const size_t before = refused.size();
    // The line's start, and (to err on the safe side) the text after each comment's end: a
    // comment begun on an earlier line may end just before a directive.
    checkDirective(file, line, 0, refused);
    for (size_t end = line.text.find("*/"); end != std::string::npos && refused.size() == before;
         end = line.text.find("*/", end + 2))
      checkDirective(file, line, end + 2, refused);
    if (refused.size() == before) checkHasInclude(file, line, refused);
  }
  return refused;
}

}  // namespace convscope
