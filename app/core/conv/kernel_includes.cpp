#include "app/core/conv/kernel_includes.h"

#include <algorithm>

// What NVRTC 13.0 does with a kernel file (a probe: nvrtcCompileProgram, --std=c++17, compute_75):
// - Only a backslash right before a line end (LF or CRLF) joins two lines. A backslash, a space
//   (or a tab, a form feed) and the line end is no splice (warning #1750-D), so a comment ending
//   in "\ " followed by #include "/etc/passwd" includes the file.
// - Trigraphs are not replaced (warning #1406-D): ??= is not #, ??/ does not join lines.
// - A lone CR does not end a line; a NUL ends the text (nvrtcCreateProgram reads a C string). A
//   byte-order mark or a no-break space before # is no blank: the line is then no directive.
// - "# /*", a line end and "*/ include \"f\"" includes f: a comment is one space and the directive
//   reads on past it ("#define X 1 /*", line end, "*/ + 2" defines X as 1 + 2).
// - A # right after a "*/" that closes a comment begun on an earlier line starts a directive,
//   even with code before the comment ("int a; /*", line end, "*/ #error" stops the compile).
// - In a skipped #if group "1'000 /* '" holds no comment: the ' starts a character literal there,
//   while in compiled code it is a digit separator and the comment opens.
// - __has_include and __has_include_next (even in the main file), whether written, named by a
//   macro or pasted together with ## (H(__has_,include)("f")), tell whether f exists. #include of
//   a macro and #include_next open the file. #line and "# 7 \"name\"" rename the file in every
//   later message.
// - Not recognised: #import, #embed, __pragma, a name written with \u escapes, "##include".
//   #pragma GCC dependency, include_alias, push_macro, nounroll and diag_suppress are unknown
//   pragmas (a warning).
//
// So that no reading of the file can hide a directive from this check, the check depends on no
// lexer state: every place where a directive may begin in some reading (a logical line's start
// after blanks, or the first thing after any "*/") is checked, also inside comments and strings;
// what could change that reading (the list at the top of kernel_includes.h) is refused.

namespace convscope {
namespace {

// A refused file is never compiled, so listing its first refusals is enough; a bound keeps a
// file of a million NULs from making a million messages.
constexpr size_t kMostRefusalsListed = 100;
// Header names, and __has_include and _Pragma operands, are read this far at most: every allowed
// one is short, and the bound keeps the scan linear in the file's size.
constexpr size_t kLongestOperand = 512;

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// At most `most` characters of `text`, for a message (a name may be a megabyte long).
std::string excerpt(std::string_view text, size_t most = 60) {
  return text.size() <= most ? std::string(text) : std::string(text.substr(0, most)) + "...";
}

// The refusals of the file's first lines, each once, whatever order the checks find them in.
class Refusals {
 public:
  explicit Refusals(const std::string& file) : file_(file) {}
  void add(int line, std::string message) {
    // The same refusal again on the same line (a line of a thousand NULs): listed once.
    if (!list_.empty() && list_.back().line == line && list_.back().message == message) return;
    list_.push_back({file_, line, std::move(message)});
    if (list_.size() >= 2 * kMostRefusalsListed) keepFirstLines();
  }
  std::vector<KernelDiagnostic> take() {
    keepFirstLines();
    return std::move(list_);
  }

 private:
  void keepFirstLines() {
    std::stable_sort(list_.begin(), list_.end(),
                     [](const KernelDiagnostic& a, const KernelDiagnostic& b) { return a.line < b.line; });
    list_.erase(std::unique(list_.begin(), list_.end(),
                            [](const KernelDiagnostic& a, const KernelDiagnostic& b) {
                              return a.line == b.line && a.message == b.message;
                            }),
                list_.end());
    if (list_.size() > kMostRefusalsListed) list_.resize(kMostRefusalsListed);
  }

  const std::string& file_;
  std::vector<KernelDiagnostic> list_;
};

// The reason given for everything that could open a file.
std::string refusedInclude(const std::string& what) {
  static const std::string kReason = [] {
    std::string reason =
        " is refused: a kernel file may include only \"" + std::string(kConvScopeKernelHeaderName) + "\"";
    for (const std::string& name : allowedKernelHeaders()) reason += ", <" + name + ">";
    return reason + ", so that nothing else of the machine it is compiled on can be read (docs/your-kernel.md)";
  }();
  return what + kReason;
}

bool isAllowedHeader(std::string_view name, bool angle) {
  if (!angle) return name == kConvScopeKernelHeaderName;
  const auto& allowed = allowedKernelHeaders();
  return std::find(allowed.begin(), allowed.end(), name) != allowed.end();
}

// The pragma whose text (what follows #pragma, or _Pragma's string) is `text`, if allowed.
bool isAllowedPragma(std::string_view text) {
  size_t at = 0;
  while (at < text.size() && isBlank(text[at])) ++at;
  size_t end = at;
  while (end < text.size() && isIdentifierChar(text[end])) ++end;
  const std::string_view name = text.substr(at, end - at);
  const auto& allowed = allowedKernelPragmas();
  return std::find(allowed.begin(), allowed.end(), name) != allowed.end();
}

std::string refusedPragma(const std::string& what) {
  static const std::string kReason = [] {
    std::string list;
    for (const std::string& name : allowedKernelPragmas()) list += (list.empty() ? "" : ", ") + name;
    return " is refused: a kernel file may use only the pragmas " + list +
           " (others can name files, as #pragma GCC dependency does, or are unknown to NVRTC)";
  }();
  return what + kReason;
}

// The text as the compiler's lexer reads it: a backslash right before a line end joins the lines
// (phase 2 of translation), CRLF is LF. What would make compilers read it differently is refused
// on the way; NULs and lone CRs (refused) are kept as blanks so that the other checks go on.
struct SplicedText {
  std::string text;
  std::vector<size_t> lineStarts;  // where each physical line begins in `text`, line 1 first

  // The physical line (1-based) of the character at `offset` of `text`.
  int lineAt(size_t offset) const {
    return static_cast<int>(std::upper_bound(lineStarts.begin(), lineStarts.end(), offset) - lineStarts.begin());
  }
};

SplicedText spliceLines(std::string_view raw, Refusals& refusals) {
  SplicedText out;
  out.text.reserve(raw.size());
  out.lineStarts.push_back(0);
  int line = 1;
  const auto nextLine = [&] {
    ++line;
    out.lineStarts.push_back(out.text.size());
  };
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '\n') {
      out.text += '\n';
      nextLine();
    } else if (c == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') {
      // CRLF: the LF ends the line.
    } else if (c == '\r') {
      refusals.add(line,
                   "a carriage return that does not end a line (a CR without an LF) is refused: compilers disagree "
                   "on whether it starts a new line; save the file with LF or CRLF line ends");
      out.text += ' ';
    } else if (c == '\0') {
      refusals.add(line,
                   "a NUL byte is refused: the compiler stops reading the file at it, so what it compiled would not "
                   "be what was checked; delete it");
      out.text += ' ';
    } else if (c == '\\') {
      size_t lineEnd = i + 1;
      if (lineEnd + 1 < raw.size() && raw[lineEnd] == '\r' && raw[lineEnd + 1] == '\n') ++lineEnd;
      if (lineEnd < raw.size() && raw[lineEnd] == '\n') {  // a splice: the line goes on
        i = lineEnd;
        nextLine();
        continue;
      }
      size_t after = i + 1;
      while (after < raw.size() && isBlank(raw[after])) ++after;
      if (after > i + 1 && after < raw.size() && (raw[after] == '\n' || raw[after] == '\r'))
        refusals.add(line,
                     "a backslash followed by blanks at the end of a line is refused: NVRTC does not join the next "
                     "line to this one (only a backslash right before the line end does), other compilers do; "
                     "delete the blanks after the backslash, or the backslash");
      if (i + 1 == raw.size())
        refusals.add(line,
                     "a backslash at the end of the file is refused: it would join the file's last line to the text "
                     "the compiler reads after it; end the file with a line end");
      out.text += c;
    } else if (c == '?' && i + 2 < raw.size() && raw[i + 1] == '?' &&
               std::string_view("=/'()!<>-").find(raw[i + 2]) != std::string_view::npos) {
      static const std::string_view kTrigraphMeaning = "#\\^[]|{}~";
      const char meaning = kTrigraphMeaning[std::string_view("=/'()!<>-").find(raw[i + 2])];
      refusals.add(line, std::string("the trigraph ??") + raw[i + 2] +
                             " is refused: C++17 removed trigraphs, but a compiler may still read it as '" + meaning +
                             "' (NVRTC does not); write '" + meaning + "' itself, or put a character between the ?s");
      out.text += c;
    } else {
      out.text += c;
    }
  }
  return out;
}

// Past blanks and comments that close before `end`, from `at`; `end` at a // comment or one that
// runs on past `end`.
size_t skipBlanksAndComments(const std::string& text, size_t at, size_t end) {
  while (at < end) {
    if (isBlank(text[at])) {
      ++at;
    } else if (text.compare(at, 2, "/*") == 0) {
      const size_t length = std::string_view(text).substr(at + 2, end - at - 2).find("*/");
      if (length == std::string_view::npos) return end;
      at += 2 + length + 2;
    } else if (text.compare(at, 2, "//") == 0) {
      return end;
    } else {
      return at;
    }
  }
  return end;
}

// A header name at `at` ("<name>" or "\"name\""), read no further than `end`.
struct HeaderName {
  std::string written;  // as written, with its brackets or quotes; empty when none is written there
  std::string_view name;
  bool angle = false;
  bool complete = false;  // closed within kLongestOperand characters and before `end`
  size_t end = 0;         // just after it
};

HeaderName headerNameAt(const std::string& text, size_t at, size_t end) {
  HeaderName header;
  if (at >= end || (text[at] != '<' && text[at] != '"')) return header;
  header.angle = text[at] == '<';
  const size_t limit = std::min(end, at + 1 + kLongestOperand);
  const std::string_view inside = std::string_view(text).substr(at + 1, limit - at - 1);
  const size_t close = inside.find(header.angle ? '>' : '"');
  if (close == std::string_view::npos) {
    header.written = excerpt(std::string_view(text).substr(at, limit - at));
    header.end = limit;
    return header;
  }
  header.name = inside.substr(0, close);
  header.written = excerpt(std::string_view(text).substr(at, close + 2), 80);
  header.complete = true;
  header.end = at + close + 2;
  return header;
}

// The end of the window in which an operand starting at `at` is read: the line's end or
// kLongestOperand characters on.
size_t operandWindowEnd(const std::string& text, size_t at) {
  const size_t newline = std::string_view(text).substr(at, kLongestOperand).find('\n');
  return newline == std::string_view::npos ? std::min(text.size(), at + kLongestOperand) : at + newline;
}

// Checks each directive that may begin at a '#' or "%:", knowing the logical line it is on.
class DirectiveCheck {
 public:
  DirectiveCheck(const SplicedText& spliced, Refusals& refusals)
      : spliced_(spliced), text_(spliced.text), refusals_(refusals) {}

  void check(size_t hash, size_t lineStart, size_t lineEnd) {
    learnLine(lineStart, lineEnd);
    const int line = spliced_.lineAt(hash);
    // The compiler reads a directive on past a comment that runs over the line's end (see the top).
    if (unclosedCommentAt_ != std::string::npos && unclosedCommentAt_ > hash) {
      refusals_.add(line,
                    "a /* comment that begins after a directive's # and ends on a later line is refused: the "
                    "compiler reads the directive on past the comment (\"# /*\" and \"*/ include\" on the next line "
                    "is an #include); close the comment on the directive's line, or use //");
      return;
    }
    const size_t nameAt = skipBlanksAndComments(text_, hash + (text_[hash] == '#' ? 1 : 2), lineEnd);
    size_t nameEnd = nameAt;
    while (nameEnd < lineEnd && (isIdentifierChar(text_[nameEnd]) || text_[nameEnd] == '\\')) ++nameEnd;
    const std::string_view name = std::string_view(text_).substr(nameAt, nameEnd - nameAt);
    if (name.empty()) return;  // the null directive, or no directive
    if (name.find('\\') != std::string_view::npos) {
      refusals_.add(line, refusedInclude("a directive written with escapes ('#" + excerpt(name) + "')"));
    } else if (name[0] >= '0' && name[0] <= '9') {
      refusals_.add(line, "a line marker ('# " + excerpt(name) +
                              "') is refused: it would make the compiler's messages name another file or line "
                              "than yours");
    } else if (name == "line") {
      refusals_.add(line,
                    "#line is refused: it would make the compiler's messages name another file or line than yours");
    } else if (name == "include" || name == "include_next" || name == "import" || name == "embed") {
      checkInclude(std::string(name), nameEnd, lineEnd, line);
    } else if (name == "pragma") {
      const size_t at = skipBlanksAndComments(text_, nameEnd, lineEnd);
      const std::string_view pragma = std::string_view(text_).substr(at, lineEnd - at);
      if (!isAllowedPragma(pragma)) refusals_.add(line, refusedPragma("'#pragma " + excerpt(pragma, 40) + "'"));
    } else if (name == "define") {
      const auto paste = std::lower_bound(pastes_.begin(), pastes_.end(), nameEnd);
      if (paste != pastes_.end())
        refusals_.add(spliced_.lineAt(*paste),
                      "the token-paste operator " + std::string(text_.compare(*paste, 2, "##") == 0 ? "##" : "%:%:") +
                          " is refused: a name pasted together (a##b) can spell __has_include or another name this "
                          "check looks for, and no check can follow every paste; write the name out");
    }
  }

 private:
  // Where ## and %:%: stand on the line, and where a /* opens that does not close on it; each line
  // is read once, however many directives it may hold.
  void learnLine(size_t lineStart, size_t lineEnd) {
    if (lineStart == learnedLineStart_) return;
    learnedLineStart_ = lineStart;
    const std::string_view line = std::string_view(text_).substr(lineStart, lineEnd - lineStart);
    pastes_.clear();
    for (size_t at = 0; at + 1 < line.size(); ++at) {
      if (line.compare(at, 2, "##") == 0 || line.compare(at, 4, "%:%:") == 0) pastes_.push_back(lineStart + at);
    }
    const size_t lastOpen = line.rfind("/*");
    unclosedCommentAt_ = lastOpen != std::string_view::npos && line.find("*/", lastOpen + 2) == std::string_view::npos
                             ? lineStart + lastOpen
                             : std::string::npos;
  }

  void checkInclude(const std::string& directive, size_t at, size_t lineEnd, int line) {
    const HeaderName header = headerNameAt(text_, skipBlanksAndComments(text_, at, lineEnd), lineEnd);
    if (header.written.empty()) {
      refusals_.add(line, refusedInclude("#" + directive + " of a computed name (only a written <name> is allowed)"));
      return;
    }
    if (directive != "include" || !header.complete || !isAllowedHeader(header.name, header.angle)) {
      refusals_.add(line, refusedInclude("#" + directive + " " + header.written));
      return;
    }
    // NVRTC would ignore what follows (a warning): refused all the same, so that the line reads as
    // what it does.
    if (skipBlanksAndComments(text_, header.end, lineEnd) != lineEnd)
      refusals_.add(
          line, "text after '#include " + header.written + "' is refused: only a comment may follow the header's name");
  }

  const SplicedText& spliced_;
  const std::string& text_;
  Refusals& refusals_;
  size_t learnedLineStart_ = std::string::npos;
  std::vector<size_t> pastes_;
  size_t unclosedCommentAt_ = std::string::npos;
};

// '#' or "%:" (its digraph) at `at`.
bool isHash(const std::string& text, size_t at, size_t end) {
  return at < end && (text[at] == '#' || (text[at] == '%' && at + 1 < end && text[at + 1] == ':'));
}

void checkDirectives(const SplicedText& spliced, Refusals& refusals) {
  const std::string& text = spliced.text;
  DirectiveCheck directives(spliced, refusals);
  size_t lineStart = 0;
  while (lineStart <= text.size()) {
    const size_t newline = text.find('\n', lineStart);
    const size_t lineEnd = newline == std::string::npos ? text.size() : newline;
    size_t at = lineStart;
    // NVRTC reads a byte-order mark as no blank, GCC skips one that opens the file: read both ways.
    if (lineStart == 0 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) at = 3;
    while (at < lineEnd && isBlank(text[at])) ++at;
    if (isHash(text, at, lineEnd)) directives.check(at, lineStart, lineEnd);
    // After any "*/": one that closes a comment begun on an earlier line may stand before a
    // directive, and which "*/" does depends on a reading of comments and strings.
    const std::string_view line = std::string_view(text).substr(lineStart, lineEnd - lineStart);
    for (size_t close = line.find("*/"); close != std::string_view::npos; close = line.find("*/", close + 1)) {
      at = lineStart + close + 2;
      while (at < lineEnd && isBlank(text[at])) ++at;
      if (isHash(text, at, lineEnd)) directives.check(at, lineStart, lineEnd);
    }
    lineStart = lineEnd + 1;
  }
}

// __has_include(<name>) tells whether any file exists; only the allowed names may be asked, and
// only written out. Searched everywhere (comments and strings too), as a directive is.
void checkHasInclude(const SplicedText& spliced, Refusals& refusals) {
  const std::string& text = spliced.text;
  for (size_t at = text.find("__has_"); at != std::string::npos; at = text.find("__has_", at + 1)) {
    if (at > 0 && isIdentifierChar(text[at - 1])) continue;  // inside a longer name
    const std::string_view rest = std::string_view(text).substr(at);
    if (!startsWith(rest, "__has_include") && !startsWith(rest, "__has_embed")) continue;
    size_t nameEnd = at;
    while (nameEnd < text.size() && isIdentifierChar(text[nameEnd])) ++nameEnd;
    const std::string name = excerpt(std::string_view(text).substr(at, nameEnd - at));
    const size_t end = operandWindowEnd(text, nameEnd);
    HeaderName header;
    size_t i = skipBlanksAndComments(text, nameEnd, end);
    if (i < end && text[i] == '(') header = headerNameAt(text, skipBlanksAndComments(text, i + 1, end), end);
    const bool closed = header.complete && [&] {
      const size_t close = skipBlanksAndComments(text, header.end, end);
      return close < end && text[close] == ')';
    }();
    const int line = spliced.lineAt(at);
    if (!closed)
      refusals.add(line,
                   refusedInclude(name + " of a computed name (only " + name + "(<name>) written out is allowed)"));
    else if (name != "__has_include" || !isAllowedHeader(header.name, header.angle))
      refusals.add(line, refusedInclude(name + "(" + header.written + ")"));
  }
}

// _Pragma("text") is #pragma text: the same pragmas are allowed, and only in a written string.
void checkPragmaOperators(const SplicedText& spliced, Refusals& refusals) {
  static const std::string kOperator = "_Pragma";
  const std::string& text = spliced.text;
  for (size_t at = text.find(kOperator); at != std::string::npos; at = text.find(kOperator, at + 1)) {
    const size_t after = at + kOperator.size();
    if ((at > 0 && isIdentifierChar(text[at - 1])) || (after < text.size() && isIdentifierChar(text[after])))
      continue;  // part of a longer name
    const size_t end = operandWindowEnd(text, after);
    std::string pragma;  // the string's text, with \" and \\ read as " and \ (as the compiler does)
    bool written = false;
    size_t i = skipBlanksAndComments(text, after, end);
    if (i < end && text[i] == '(') i = skipBlanksAndComments(text, i + 1, end);
    if (i < end && text[i] == '"') {
      for (++i; i < end && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < end && (text[i + 1] == '"' || text[i + 1] == '\\')) ++i;
        pragma += text[i];
      }
      if (i < end) i = skipBlanksAndComments(text, i + 1, end);
      written = i < end && text[i] == ')';
    }
    const int line = spliced.lineAt(at);
    if (!written)
      refusals.add(line, refusedPragma("a _Pragma without a written string (write _Pragma(\"unroll\"), say)"));
    else if (!isAllowedPragma(pragma))
      refusals.add(line, refusedPragma("'_Pragma(\"" + excerpt(pragma, 40) + "\")'"));
  }
}

// A raw string literal (R"d(...)d") over several lines: a directive-like line inside it is one in
// a reading that misses the string (whether a skipped #if group reads raw strings differs between
// compilers), and a backslash-newline inside it is not a splice.
void checkRawStrings(const SplicedText& spliced, Refusals& refusals) {
  const std::string& text = spliced.text;
  const auto isDelimiterChar = [](char c) { return c > ' ' && c < 127 && c != '(' && c != ')' && c != '\\'; };
  size_t from = 0;
  for (size_t at = text.find("R\"", from); at != std::string::npos; at = text.find("R\"", from)) {
    from = at + 1;
    // The prefix: R, LR, uR, UR or u8R, not the end of a longer name.
    size_t start = at;
    if (start >= 2 && text.compare(start - 2, 2, "u8") == 0)
      start -= 2;
    else if (start >= 1 && (text[start - 1] == 'L' || text[start - 1] == 'u' || text[start - 1] == 'U'))
      start -= 1;
    if (start > 0 && isIdentifierChar(text[start - 1])) continue;
    const size_t delimiterAt = at + 2;
    size_t open = delimiterAt;
    while (open < text.size() && open - delimiterAt <= 16 && isDelimiterChar(text[open])) ++open;
    if (open >= text.size() || text[open] != '(' || open - delimiterAt > 16) continue;  // no raw string
    const std::string closer = ")" + text.substr(delimiterAt, open - delimiterAt) + "\"";
    const size_t close = text.find(closer, open + 1);
    const int line = spliced.lineAt(start);
    if (close == std::string::npos) {
      refusals.add(line, "a raw string literal that is never closed is refused: close it on the line it begins on");
      return;  // the rest of the file is inside it
    }
    if (spliced.lineAt(close + closer.size() - 1) != line)
      refusals.add(line,
                   "a raw string literal over several lines is refused: whether a skipped #if group reads it as a "
                   "string differs between compilers, so a line inside it could be read as a directive; keep it on "
                   "one line (or join strings: \"line 1\\n\" \"line 2\")");
    from = close + closer.size();
  }
}

}  // namespace

const std::vector<std::string>& allowedKernelHeaders() {
  static const std::vector<std::string> headers = {
      "mma.h",         "cuda_fp16.h",  "cuda_bf16.h", "cuda_fp8.h",    "cuda_pipeline.h", "cooperative_groups.h",
      "cuda/pipeline", "cuda/barrier", "cuda/atomic", "cuda/std/cmath"};
  return headers;
}

const std::vector<std::string>& allowedKernelPragmas() {
  // The ones NVRTC 13.0 knows and kernels use; nounroll and diag_suppress are unknown to it.
  static const std::vector<std::string> pragmas = {
      "unroll",          "once",        "pack", "nv_abi", "nv_diag_suppress", "nv_diag_warning", "nv_diag_error",
      "nv_diag_default", "nv_diag_once"};
  return pragmas;
}

std::vector<KernelDiagnostic> refusedKernelIncludes(const std::string& file, std::string_view text) {
  Refusals refusals(file);
  const SplicedText spliced = spliceLines(text, refusals);
  checkDirectives(spliced, refusals);
  checkHasInclude(spliced, refusals);
  checkPragmaOperators(spliced, refusals);
  checkRawStrings(spliced, refusals);
  return refusals.take();
}

}  // namespace convscope
