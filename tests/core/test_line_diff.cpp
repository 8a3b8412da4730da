// The line diff against independent computations, on random edits of random texts (empty texts,
// CRLF lines, a last line without a newline among them): the script's kept and removed lines
// are the first text, its kept and added lines the second; its length is the shortest, as a
// textbook LCS table says; and its unified output, applied by a patch reader written here, turns
// the first text into the second.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/util/line_diff.h"

namespace convscope::testing {
namespace {

// The lines with their terminators, split here independently of line_diff.cpp.
std::vector<std::string> rawLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string current;
  for (char c : text) {
    current += c;
    if (c == '\n') {
      lines.push_back(current);
      current.clear();
    }
  }
  if (!current.empty()) lines.push_back(current);
  return lines;
}

// The length of a longest common subsequence of lines, by the O(nm) table.
int lcsLength(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<int>> table(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j)
      table[i][j] = a[i - 1] == b[j - 1] ? table[i - 1][j - 1] + 1 : std::max(table[i - 1][j], table[i][j - 1]);
  return table[a.size()][b.size()];
}

// Applies a unified diff to `original` as patch(1) would, checking each context and removed line
// against the text; returns the patched text. Fails the test on any mismatch.
std::string applyUnifiedDiff(const std::string& original, const std::string& patch) {
  std::vector<std::string> source = rawLines(original), result;
  std::istringstream in(patch);
  std::string line;
  size_t next = 0;  // the next line of `source` not yet copied
  std::string* lastWritten = nullptr;
  bool lastWrittenIsSource = false;
  std::string lastSourceSeen;
  while (std::getline(in, line)) {
    if (line.rfind("--- ", 0) == 0 || line.rfind("+++ ", 0) == 0) continue;
    if (line.rfind("@@ -", 0) == 0) {
      int oldStart = 0, oldCount = 1;  // "@@ -5 +5 @@": one line
      EXPECT_GE(std::sscanf(line.c_str(), "@@ -%d,%d", &oldStart, &oldCount), 1) << line;
      const size_t firstOld = oldCount == 0 ? oldStart : oldStart - 1;  // 0-based index of the hunk's first old line
      while (next < firstOld && next < source.size()) result.push_back(source[next++]);
      continue;
    }
    if (line == "\\ No newline at end of file") {
      // The line before had no newline in the text it belongs to.
      if (lastWritten && !lastWritten->empty() && lastWritten->back() == '\n') lastWritten->pop_back();
      if (!lastWrittenIsSource) EXPECT_EQ(lastSourceSeen.find('\n'), std::string::npos);
      continue;
    }
    EXPECT_FALSE(line.empty()) << "a diff line without its marker";
    if (line.empty()) continue;
    const char marker = line[0];
    const std::string text = line.substr(1) + "\n";
    if (marker == ' ' || marker == '-') {
      EXPECT_LT(next, source.size()) << "the diff reaches past the text";
      if (next >= source.size()) return {};
      const std::string& expected = source[next];
      EXPECT_TRUE(expected == text || expected + "\n" == text) << "context differs: " << line;
      lastSourceSeen = expected;
      ++next;
      if (marker == ' ') {
        result.push_back(text);
        lastWritten = &result.back();
        lastWrittenIsSource = true;
      } else {
        lastWritten = &lastSourceSeen;  // a "\ No newline" after a removed line speaks of the old text
        lastWrittenIsSource = false;
      }
    } else if (marker == '+') {
      result.push_back(text);
      lastWritten = &result.back();
      lastWrittenIsSource = true;
    } else {
      ADD_FAILURE() << "unknown diff line: " << line;
    }
  }
  while (next < source.size()) result.push_back(source[next++]);
  std::string joined;
  for (const std::string& l : result) joined += l;
  return joined;
}

// A random text of `lines` lines from a small alphabet (so lines repeat, as code's braces do),
// some ending in CRLF, the last sometimes without a newline.
std::string randomText(std::mt19937& random, int lines) {
  static const std::vector<std::string> words = {"{", "}", "int x = 0;", "acc += a * b;", "", "  return;", "if (x)"};
  std::string text;
  for (int i = 0; i < lines; ++i) {
    text += words[random() % words.size()];
    text += random() % 5 == 0 ? "\r\n" : "\n";
  }
  if (!text.empty() && random() % 3 == 0) text.pop_back();  // no newline at the end (or a lone \r)
  return text;
}

// `text` with a few random lines removed, replaced or inserted.
std::string randomEdit(std::mt19937& random, const std::string& text) {
  std::vector<std::string> lines = rawLines(text);
  const int edits = static_cast<int>(random() % 5);
  for (int e = 0; e < edits; ++e) {
    const size_t at = lines.empty() ? 0 : random() % (lines.size() + 1);
    switch (random() % 3) {
      case 0:
        if (at < lines.size()) lines.erase(lines.begin() + at);
        break;
      case 1:
        if (at < lines.size()) lines[at] = "changed " + std::to_string(random() % 3) + "\n";
        break;
      default:
        lines.insert(lines.begin() + at, "inserted\n");
    }
  }
  std::string edited;
  for (const std::string& l : lines) edited += l;
  if (!edited.empty() && random() % 4 == 0) edited.pop_back();
  return edited;
}

void checkDiff(const std::string& a, const std::string& b) {
  SCOPED_TRACE("A = \"" + a + "\"\nB = \"" + b + "\"");
  const LineDiff diff = diffLines(a, b);
  // Kept + removed lines are A, kept + added lines are B, each at the line number it claims.
  TextLines fromOld, fromNew;
  fromOld.endsWithNewline = diff.oldEndsWithNewline;
  fromNew.endsWithNewline = diff.newEndsWithNewline;
  for (const DiffLine& line : diff.lines) {
    if (line.kind != DiffLine::Kind::Added) {
      fromOld.lines.push_back(line.text);
      EXPECT_EQ(line.oldLine, static_cast<int>(fromOld.lines.size()));
    }
    if (line.kind != DiffLine::Kind::Removed) {
      fromNew.lines.push_back(line.text);
      EXPECT_EQ(line.newLine, static_cast<int>(fromNew.lines.size()));
    }
  }
  EXPECT_EQ(joinLines(fromOld), a);
  EXPECT_EQ(joinLines(fromNew), b);
  // Shortest: every line not in a longest common subsequence is added or removed, no more.
  const std::vector<std::string> rawA = rawLines(a), rawB = rawLines(b);
  const int common = lcsLength(rawA, rawB);
  EXPECT_EQ(diff.removed(), static_cast<int>(rawA.size()) - common);
  EXPECT_EQ(diff.added(), static_cast<int>(rawB.size()) - common);
  EXPECT_EQ(diff.identical(), a == b);
  // The unified diff patches A into B, with any amount of context.
  for (int context : {0, 1, 3}) {
    const std::string patch = unifiedDiff(diff, "a", "b", context);
    EXPECT_EQ(patch.empty(), a == b) << patch;
    EXPECT_EQ(applyUnifiedDiff(a, patch), b) << "context " << context << ":\n" << patch;
  }
}

TEST(LineDiff, RandomEditsOfRandomTextsAreShortestAndPatchBack) {
  std::mt19937 random(20261126);
  for (int round = 0; round < 400; ++round) {
    const std::string a = randomText(random, static_cast<int>(random() % 12));
    const std::string b = round % 7 == 0 ? randomText(random, static_cast<int>(random() % 12)) : randomEdit(random, a);
    checkDiff(a, b);
  }
}

TEST(LineDiff, EdgeCases) {
  checkDiff("", "");
  checkDiff("", "one\n");
  checkDiff("one\n", "");
  checkDiff("", "no newline");
  checkDiff("no newline", "");
  checkDiff("a\nb", "a\nb\n");  // only the newline at the end differs
  checkDiff("a\nb\n", "a\nb");
  checkDiff("a\r\nb\r\n", "a\nb\n");  // line endings changed: every line differs
  checkDiff("\n\n\n", "\n\n");
  checkDiff("same\n", "same\n");
}

TEST(LineDiff, OneChangedLineInALongFileIsOneHunkWithThreeLinesOfContext) {
  std::string a, b;
  for (int i = 1; i <= 20; ++i) {
    a += "line " + std::to_string(i) + "\n";
    b += (i == 10 ? std::string("line ten") : "line " + std::to_string(i)) + "\n";
  }
  const std::string patch = unifiedDiff(diffLines(a, b), "v1", "v2");
  // Independent of the code: diff -u prints exactly this for the change.
  EXPECT_EQ(
      patch,
      "--- v1\n+++ v2\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line "
      "13\n");
}

TEST(LineDiff, FarApartChangesAreSeparateHunks) {
  std::string a, b;
  for (int i = 1; i <= 30; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 2 || i == 28 ? "x" : std::to_string(i)) + "\n";
  }
  const std::string patch = unifiedDiff(diffLines(a, b), "a", "b");
  EXPECT_NE(patch.find("@@ -1,5 +1,5 @@"), std::string::npos) << patch;
  EXPECT_NE(patch.find("@@ -25,6 +25,6 @@"), std::string::npos) << patch;
  EXPECT_EQ(applyUnifiedDiff(a, patch), b);
}

}  // namespace
}  // namespace convscope::testing
