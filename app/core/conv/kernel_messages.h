// What a student reads when their kernel misbehaves (docs/your-kernel.md, "Faults and output"):
// the kernel's printf output, capped so that a kernel that prints once per output does not flood
// the terminal or the window, and a fault said in the student's terms (read or wrote outside its
// buffers, trapped, assertion failed with its text, ...) with the student's file, never a path or
// function inside ConvScope or a CUDA API name. Plain host code: tested without a GPU.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace convscope {

// The kernel's output during the check is shown up to this many lines; the rest is counted.
inline constexpr int kKernelOutputLineCap = 300;

struct KernelOutput {
  std::vector<std::string> lines;  // the first lines, at most the cap
  int64_t totalLines = 0;          // every line it printed
  // Assertion lines past the cap (the fault's message needs them), at most a few.
  std::vector<std::string> lateAssertions;
  bool truncated() const { return totalLines > static_cast<int64_t>(lines.size()); }
  // The lines, then "... 40263 lines in all; the first 300 shown" when some were left out.
  std::string text() const;
  // The shown lines and the late assertions: what explainKernelFault reads.
  std::string textForDiagnosis() const;
};

// The first `maxLines` lines of `text` and the count of all of them (a last line without a
// newline counts).
KernelOutput capKernelOutput(std::string_view text, int maxLines = kKernelOutputLineCap);
// The same for a file, read line by line (it may be large); a missing file is no output.
KernelOutput readKernelOutput(const std::filesystem::path& file, int maxLines = kKernelOutputLineCap);

// An assertion the kernel's assert() reported in its output ("file.cu:12: ... Assertion `x < 4`
// failed."): where and what. line 0: no assertion found.
struct KernelAssertion {
  std::string file;
  int line = 0;
  std::string condition;
};
KernelAssertion findKernelAssertion(const std::string& kernelOutput);

// `error` as the kernel's process reported it (CUDA's words, often after a ConvScope path, line
// and API call) turned into "FILE: what the kernel did", in the student's terms. `kernelOutput`
// holds the kernel's printf and assert output (the assertion's text and line come from there).
// A message that is not a GPU fault (one ConvScope wrote for the student) keeps its words, any
// "path:line: call(...) failed: " before them removed.
std::string explainKernelFault(const std::string& error, const std::string& kernelOutput,
                               const std::string& studentFile);

}  // namespace convscope
