// libFuzzer target: arbitrary bytes as a student's .cu file. The contract parser (the CONVSCOPE_*
// macros, the kernel's signature) must list a broken file's problems, never crash, hang or throw
// anything but convscope::Error; a file it accepts must give a launch geometry that computes
// every output pixel of a small problem without overflowing. The #include filter's refusals
// name a line of the file, come in line order, at most 100; a file with what the filter must
// always refuse (a NUL, a lone CR, a trigraph, a backslash before blanks at a line's end), found
// here by a plain search, is refused.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/conv/kernel_includes.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/util/error.h"

namespace {

bool mustBeRefused(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0' || (c == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) return true;
    if (c == '?' && text.compare(i, 2, "??") == 0 && i + 2 < text.size() &&
        std::string("=/'()!<>-").find(text[i + 2]) != std::string::npos)
      return true;
    if (c == '\\') {
      size_t end = i + 1;
      while (end < text.size() && (text[end] == ' ' || text[end] == '\t' || text[end] == '\f' || text[end] == '\v'))
        ++end;
      if (end > i + 1 && end < text.size() && (text[end] == '\n' || text[end] == '\r')) return true;
    }
  }
  return false;
}

void checkRefusals(const std::string& text, const std::vector<convscope::KernelDiagnostic>& refusals) {
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (refusals.size() > 100) std::abort();
  for (size_t i = 0; i < refusals.size(); ++i) {
    if (refusals[i].line < 1 || refusals[i].line > lines) std::abort();
    if (i > 0 && refusals[i].line < refusals[i - 1].line) std::abort();
    if (refusals[i].message.find(" is refused: ") == std::string::npos) std::abort();
  }
  if (mustBeRefused(text) && refusals.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const convscope::UserKernelSource source = convscope::parseUserKernelSource("fuzz.cu", text);
    for (const convscope::KernelDiagnostic& problem : source.problems)
      if (problem.text().rfind("fuzz.cu", 0) != 0) std::abort();  // every problem names the file
    checkRefusals(text, source.refusedIncludes);
    if (!source.ok()) return 0;
    const convscope::ConvVariant row = convscope::userKernelVariantRow(source);
    (void)row;
    convscope::ConvProblem problem;
    problem.batch = 2;
    problem.inChannels = 1;
    problem.inHeight = problem.inWidth = 28;
    problem.outChannels = 3;
    problem.kernelHeight = problem.kernelWidth = 3;
    if (source.launch.unsupportedReason(problem).empty()) (void)source.launch.geometry(problem);
  } catch (const convscope::Error&) {
  }
  return 0;
}
