#include "app/core/util/line_diff.h"

#include <algorithm>
#include <sstream>

namespace convscope {
namespace {

// Past this many edits the diff stops searching for the shortest script (its memory grows as the
// square of the edits) and reports the rest of the differing middle as removed, then added.
// Two versions of a student's kernel stay far below it; two unrelated SASS listings may not.
constexpr int kMaxSearchedEdits = 4000;

// A line with its terminator, so that "b" at the end of a file and "b\n" compare unequal.
std::vector<std::string> linesWithTerminators(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end + 1 - start));
    start = end + 1;
  }
  return lines;
}

std::string withoutTerminator(const std::string& line) {
  return !line.empty() && line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
}

enum class Edit { Same, Remove, Add };

// Myers' greedy algorithm on a[0,n) and b[0,m), backtracked through the saved frontier of each
// step; the edits come out in order. Falls back to remove-all-then-add-all past kMaxSearchedEdits.
std::vector<Edit> shortestEditScript(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  const int maxEdits = std::min(n + m, kMaxSearchedEdits);
  const int offset = maxEdits + 1;
  std::vector<int> v(2 * offset + 1, 0);
  // trace[d]: v[-(d+1) .. d+1] as it was before step d.
  std::vector<std::vector<int>> trace;
  bool reached = n == 0 && m == 0;
  for (int d = 0; d <= maxEdits && !reached; ++d) {
    trace.emplace_back(v.begin() + offset - (d + 1), v.begin() + offset + d + 2);
    for (int k = -d; k <= d; k += 2) {
      int x =
          (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        reached = true;
        break;
      }
    }
  }
  if (!reached) {
    std::vector<Edit> edits(n, Edit::Remove);
    edits.insert(edits.end(), m, Edit::Add);
    return edits;
  }
  std::vector<Edit> reversed;
  int x = n, y = m;
  for (int d = static_cast<int>(trace.size()) - 1; d >= 0; --d) {
    const std::vector<int>& before = trace[d];
    const auto at = [&](int k) { return before[k + d + 1]; };
    const int k = x - y;
    const int previousK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    const int previousX = at(previousK);
    const int previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      reversed.push_back(Edit::Same);
      --x, --y;
    }
    if (d > 0) reversed.push_back(x == previousX ? Edit::Add : Edit::Remove);
    x = previousX, y = previousY;
  }
  return {reversed.rbegin(), reversed.rend()};
}

}  // namespace

TextLines splitLines(const std::string& text) {
  TextLines result;
  for (const std::string& line : linesWithTerminators(text)) result.lines.push_back(withoutTerminator(line));
  result.endsWithNewline = text.empty() || text.back() == '\n';
  return result;
}

std::string joinLines(const TextLines& text) {
  std::string joined;
  for (size_t i = 0; i < text.lines.size(); ++i) {
    joined += text.lines[i];
    if (i + 1 < text.lines.size() || text.endsWithNewline) joined += '\n';
  }
  return joined;
}

int LineDiff::added() const {
  return static_cast<int>(
      std::count_if(lines.begin(), lines.end(), [](const DiffLine& l) { return l.kind == DiffLine::Kind::Added; }));
}

int LineDiff::removed() const {
  return static_cast<int>(
      std::count_if(lines.begin(), lines.end(), [](const DiffLine& l) { return l.kind == DiffLine::Kind::Removed; }));
}

LineDiff diffLines(const std::string& oldText, const std::string& newText) {
  const std::vector<std::string> a = linesWithTerminators(oldText), b = linesWithTerminators(newText);
  // The common head and tail need no search: only the middle goes through Myers.
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  const std::vector<std::string> middleA(a.begin() + head, a.end() - tail), middleB(b.begin() + head, b.end() - tail);
  std::vector<Edit> edits(head, Edit::Same);
  const std::vector<Edit> middle = shortestEditScript(middleA, middleB);
  edits.insert(edits.end(), middle.begin(), middle.end());
  edits.insert(edits.end(), tail, Edit::Same);

  LineDiff diff;
  diff.oldEndsWithNewline = oldText.empty() || oldText.back() == '\n';
  diff.newEndsWithNewline = newText.empty() || newText.back() == '\n';
  int x = 0, y = 0;
  for (Edit edit : edits) {
    DiffLine line;
    if (edit == Edit::Same) {
      line = {DiffLine::Kind::Same, withoutTerminator(a[x]), x + 1, y + 1};
      ++x, ++y;
    } else if (edit == Edit::Remove) {
      line = {DiffLine::Kind::Removed, withoutTerminator(a[x]), x + 1, 0};
      ++x;
    } else {
      line = {DiffLine::Kind::Added, withoutTerminator(b[y]), 0, y + 1};
      ++y;
    }
    diff.lines.push_back(std::move(line));
  }
  return diff;
}

std::string unifiedDiff(const LineDiff& diff, const std::string& oldName, const std::string& newName, int context) {
  const std::vector<DiffLine>& lines = diff.lines;
  const int count = static_cast<int>(lines.size());
  int oldTotal = 0, newTotal = 0;
  for (const DiffLine& line : lines) {
    oldTotal = std::max(oldTotal, line.oldLine);
    newTotal = std::max(newTotal, line.newLine);
  }
  std::ostringstream out;
  bool headerWritten = false;
  int i = 0;
  while (i < count) {
    while (i < count && lines[i].kind == DiffLine::Kind::Same) ++i;
    if (i == count) break;
    // A hunk: from `context` lines before this change to `context` lines after the last change
    // that lies within 2 * context unchanged lines of the one before it.
    const int begin = std::max(0, i - context);
    int end = i;  // one past the last change so far
    for (int j = i; j < count; ++j) {
      if (lines[j].kind != DiffLine::Kind::Same) {
        end = j + 1;
      } else if (j - end >= 2 * context) {
        break;
      }
    }
    const int stop = std::min(count, end + context);
    int oldStart = 0, oldCount = 0, newStart = 0, newCount = 0, oldBefore = 0, newBefore = 0;
    for (int j = 0; j < begin; ++j) {
      if (lines[j].oldLine) oldBefore = lines[j].oldLine;
      if (lines[j].newLine) newBefore = lines[j].newLine;
    }
    for (int j = begin; j < stop; ++j) {
      if (lines[j].oldLine && !oldCount++) oldStart = lines[j].oldLine;
      if (lines[j].newLine && !newCount++) newStart = lines[j].newLine;
    }
    if (!oldCount) oldStart = oldBefore;  // diff -u: an empty side names the line it follows
    if (!newCount) newStart = newBefore;
    if (!headerWritten) {
      out << "--- " << oldName << "\n+++ " << newName << "\n";
      headerWritten = true;
    }
    // As diff -u writes a range: "start,count", or only "start" for one line.
    const auto range = [](int start, int lineCount) {
      return lineCount == 1 ? std::to_string(start) : std::to_string(start) + "," + std::to_string(lineCount);
    };
    out << "@@ -" << range(oldStart, oldCount) << " +" << range(newStart, newCount) << " @@\n";
    for (int j = begin; j < stop; ++j) {
      const DiffLine& line = lines[j];
      out << (line.kind == DiffLine::Kind::Same      ? ' '
              : line.kind == DiffLine::Kind::Removed ? '-'
                                                     : '+')
          << line.text << "\n";
      const bool lastOld = line.oldLine == oldTotal && line.oldLine && !diff.oldEndsWithNewline;
      const bool lastNew = line.newLine == newTotal && line.newLine && !diff.newEndsWithNewline;
      if ((line.kind == DiffLine::Kind::Removed && lastOld) || (line.kind == DiffLine::Kind::Added && lastNew) ||
          (line.kind == DiffLine::Kind::Same && (lastOld || lastNew)))
        out << "\\ No newline at end of file\n";
    }
    i = stop;
  }
  return out.str();
}

}  // namespace convscope
