// A line diff of two texts (Myers' O(ND) algorithm, as diff and git use), for comparing two
// versions of a student's kernel and of its SASS. The result is the whole edit script, every line
// of both texts in order, so that a view can colour it and a test can apply it to the first text
// and get the second back; unifiedDiff() prints it with context, as `diff -u` does.
#pragma once

#include <string>
#include <vector>

namespace convscope {

// A text's lines. A line ends at "\n"; its "\r" (CRLF) stays part of it, so that a file whose line
// endings changed shows as changed. A last line without "\n" is a line (`endsWithNewline` false).
struct TextLines {
  std::vector<std::string> lines;
  bool endsWithNewline = true;  // also true for the empty text
};
TextLines splitLines(const std::string& text);
std::string joinLines(const TextLines& text);  // splitLines' inverse

struct DiffLine {
  enum class Kind { Same, Removed, Added };
  Kind kind = Kind::Same;
  std::string text;
  int oldLine = 0, newLine = 0;  // 1-based; 0 where the line is not in that text
};

struct LineDiff {
  std::vector<DiffLine> lines;  // in order: every line of A (Same or Removed) and of B (Same or Added)
  bool oldEndsWithNewline = true, newEndsWithNewline = true;
  int added() const;
  int removed() const;
  bool identical() const { return added() == 0 && removed() == 0 && oldEndsWithNewline == newEndsWithNewline; }
};

// A shortest edit script from `oldText` to `newText` (fewest lines added plus removed).
LineDiff diffLines(const std::string& oldText, const std::string& newText);

// The diff as `diff -u` prints it: "--- oldName", "+++ newName", then hunks "@@ -a,b +c,d @@" (",1" left out) with
// `context` unchanged lines around each change; "\ No newline at end of file" after a last line
// without one. Empty when the texts are identical.
std::string unifiedDiff(const LineDiff& diff, const std::string& oldName, const std::string& newName, int context = 3);

}  // namespace convscope
