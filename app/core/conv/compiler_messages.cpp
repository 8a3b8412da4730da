#include "app/core/conv/compiler_messages.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

namespace convscope {
namespace {

// "265936" -> "265,936": sizes a student compares with a limit.
std::string withThousands(unsigned long long value) {
  const std::string digits = std::to_string(value);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

// Every hexadecimal number in `text` ("0x40ed0") in decimal ("265,936").
std::string hexadecimalsInDecimal(const std::string& text) {
  static const std::regex hex("0x([0-9a-fA-F]+)");
  std::string out;
  auto from = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), hex), end; it != end; ++it) {
    out.append(from, text.cbegin() + it->position());
    out += withThousands(std::stoull((*it)[1].str(), nullptr, 16));
    from = text.cbegin() + it->position() + it->length();
  }
  out.append(from, text.cend());
  return out;
}

int lineAt(const std::string& text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

std::string joinedLines(const std::vector<int>& lines) {
  std::string joined;
  for (size_t i = 0; i < lines.size(); ++i) joined += (i ? ", " : "") + std::to_string(lines[i]);
  return joined;
}

bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Offsets of `word` as a whole token in `code`.
std::vector<size_t> tokenOffsets(const std::string& code, const std::string& word) {
  std::vector<size_t> offsets;
  for (size_t at = code.find(word); at != std::string::npos; at = code.find(word, at + word.size())) {
    const bool startsToken = at == 0 || !isIdentifierChar(code[at - 1]);
    const bool endsToken = at + word.size() >= code.size() || !isIdentifierChar(code[at + word.size()]);
    if (startsToken && endsToken) offsets.push_back(at);
  }
  return offsets;
}

}  // namespace

std::string kernelCodeOnly(const std::string& text) {
  std::string code = text;
  enum class In { Code, LineComment, BlockComment, String, Character } in = In::Code;
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (in) {
      case In::Code:
        if (c == '/' && next == '/')
          in = In::LineComment;
        else if (c == '/' && next == '*')
          in = In::BlockComment;
        else if (c == '"')
          in = In::String;
        else if (c == '\'')
          in = In::Character;
        else
          continue;
        code[i] = ' ';
        if (in == In::LineComment || in == In::BlockComment) code[++i] = ' ';
        continue;
      case In::LineComment:
        // A backslash before the newline carries the comment on (a line splice).
        if (c == '\n' && (i == 0 || text[i - 1] != '\\')) in = In::Code;
        break;
      case In::BlockComment:
        if (c == '*' && next == '/') {
          code[i] = code[i + 1] = ' ';
          ++i;
          in = In::Code;
          continue;
        }
        break;
      case In::String:
      case In::Character:
        if (c == '\\' && next != '\n' && next != '\0') {
          code[i] = code[i + 1] = ' ';
          ++i;
          continue;
        }
        if ((in == In::String && c == '"') || (in == In::Character && c == '\'') || c == '\n') in = In::Code;
        break;
    }
    if (code[i] != '\n') code[i] = ' ';
  }
  return code;
}

LineRange kernelDeclarationLines(const std::string& text) {
  const std::string code = kernelCodeOnly(text);
  for (const size_t at : tokenOffsets(code, kUserKernelName)) {
    size_t open = at + std::string(kUserKernelName).size();
    while (open < code.size() && std::isspace(static_cast<unsigned char>(code[open]))) ++open;
    if (open >= code.size() || code[open] != '(') continue;
    int depth = 0;
    size_t close = open;
    for (; close < code.size(); ++close) {
      if (code[close] == '(') ++depth;
      if (code[close] == ')' && --depth == 0) break;
    }
    return {lineAt(text, at), lineAt(text, std::min(close, code.size() - 1))};
  }
  return {};
}

std::vector<int> sharedDeclarationLines(const std::string& text, bool externOnly) {
  const std::string code = kernelCodeOnly(text);
  std::vector<int> lines;
  for (const size_t at : tokenOffsets(code, "__shared__")) {
    if (externOnly) {
      // "extern" before it on the same declaration: back over blanks and other qualifiers.
      const size_t start = code.find_last_of(";{}", at);
      const std::string before =
          code.substr(start == std::string::npos ? 0 : start + 1, at - (start == std::string::npos ? 0 : start + 1));
      if (tokenOffsets(before, "extern").empty()) continue;
    }
    const int line = lineAt(text, at);
    if (lines.empty() || lines.back() != line) lines.push_back(line);
  }
  return lines;
}

std::vector<KernelDiagnostic> assemblerErrors(const std::string& log, const std::string& file, const std::string& text,
                                              const std::string& architecture) {
  static const std::regex error(R"(^\s*ptxas (?:error|fatal)\s*: (.*)$)");
  static const std::regex tooMuch(
      R"(uses too much (shared|local) data \((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) max\))");
  std::vector<KernelDiagnostic> errors;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, error)) continue;
    const std::string what = m[1].str();
    std::smatch size;
    if (std::regex_search(what, size, tooMuch)) {
      const std::string used = withThousands(std::stoull(size[2].str(), nullptr, 16));
      const std::string most = withThousands(std::stoull(size[3].str(), nullptr, 16));
      if (size[1] == "shared") {
        const std::vector<int> lines = sharedDeclarationLines(text, false);
        std::string message = "error: its __shared__ arrays take " + used + " bytes; a block may declare at most " +
                              most + " bytes of static shared memory on " + architecture +
                              " (more needs dynamic shared memory, which the contract does not give)";
        if (lines.size() > 1) message += "; they are declared on lines " + joinedLines(lines);
        errors.push_back({file, lines.empty() ? 0 : lines.front(), message});
      } else {
        errors.push_back({file, kernelDeclarationLines(text).first,
                          "error: its local memory (local arrays and what does not fit in registers) takes " + used +
                              " bytes a thread; at most " + most + " bytes are allowed on " + architecture});
      }
      continue;
    }
    errors.push_back(
        {file, 0, "error: the assembler (ptxas, for " + architecture + ") refused it: " + hexadecimalsInDecimal(what)});
  }
  return errors;
}

std::string studentCompilerLog(const std::string& log, const LineRange* onlyLines) {
  static const std::regex header(R"(^(.*)\((\d+)\): (.*)$)");
  static const std::regex errorCount(R"(^\d+ errors? detected in the compilation of (.*)$)");
  std::ostringstream out;
  std::istringstream in(log);
  bool keeping = true;
  bool droppedAny = false;
  int keptErrors = 0;
  std::string countLineTail;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, header)) {
      const std::string file = m[1].str();
      keeping = file != "convscope-contract" && file != "__nv_name_map" &&
                (!onlyLines || onlyLines->contains(std::stoi(m[2].str())));
      droppedAny = droppedAny || !keeping;
      if (keeping && m[3].str().find("error") != std::string::npos) ++keptErrors;
      if (keeping) out << line << "\n";
      continue;
    }
    if (line.find("ptxas") != std::string::npos && line.find("ptxas") == line.find_first_not_of(' ')) {
      // The assembler's report: its errors (in decimal) stay, its information goes.
      if (line.find("error") != std::string::npos || line.find("fatal") != std::string::npos)
        out << hexadecimalsInDecimal(line.substr(line.find_first_not_of(' '))) << "\n";
      continue;
    }
    if (std::regex_match(line, m, errorCount)) {
      if (!droppedAny)
        out << line << "\n";
      else if (keptErrors > 0)
        out << keptErrors << (keptErrors == 1 ? " error" : " errors") << " detected in the compilation of "
            << m[1].str() << "\n";
      keeping = true;
      continue;
    }
    if (keeping) out << line << "\n";
  }
  std::string text = out.str();
  // No blank lines left at either end, nor runs of them where a message was taken out.
  while (text.find("\n\n\n") != std::string::npos) text.replace(text.find("\n\n\n"), 3, "\n\n");
  while (!text.empty() && text.front() == '\n') text.erase(0, 1);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace convscope
