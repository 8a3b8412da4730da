#include "app/core/conv/kernel_messages.h"

#include <fstream>
#include <regex>
#include <sstream>

namespace convscope {

std::string KernelOutput::text() const {
  std::string out;
  for (const std::string& line : lines) out.append(line).append("\n");
  if (truncated())
    out.append("... " + std::to_string(totalLines) + " lines in all; the first " + std::to_string(lines.size()) +
               " shown\n");
  return out;
}

std::string KernelOutput::textForDiagnosis() const {
  std::string out = text();
  for (const std::string& line : lateAssertions) out.append(line).append("\n");
  return out;
}

namespace {

void addLine(KernelOutput& output, std::string line, int maxLines) {
  ++output.totalLines;
  if (static_cast<int>(output.lines.size()) < maxLines)
    output.lines.push_back(std::move(line));
  else if (output.lateAssertions.size() < 4 && line.find("Assertion `") != std::string::npos)
    output.lateAssertions.push_back(std::move(line));
}

}  // namespace

KernelOutput capKernelOutput(std::string_view text, int maxLines) {
  KernelOutput output;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const size_t stop = end == std::string_view::npos ? text.size() : end;
    addLine(output, std::string(text.substr(start, stop - start)), maxLines);
    start = stop + 1;
  }
  return output;
}

KernelOutput readKernelOutput(const std::filesystem::path& file, int maxLines) {
  KernelOutput output;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) addLine(output, std::move(line), maxLines);
  return output;
}

KernelAssertion findKernelAssertion(const std::string& kernelOutput) {
  // CUDA's device-side assert prints "FILE:LINE: FUNCTION: block: [..], thread: [..] Assertion
  // `CONDITION` failed." (FILE is the name the kernel was compiled under: the student's file).
  static const std::regex assertion(R"(^(.*):(\d+): .*Assertion `(.*)` failed\.?\s*$)");
  std::istringstream in(kernelOutput);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, assertion)) return {m[1].str(), std::stoi(m[2].str()), m[3].str()};
  }
  return {};
}

namespace {

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// CUDA's words for each fault (cudaGetErrorString) and what they mean for a kernel.
struct FaultWords {
  const char* cuda;
  const char* student;
};
constexpr FaultWords kFaults[] = {
    {"illegal memory access",
     "read or wrote outside its buffers (an illegal memory access): an index past the end of input, weights or "
     "output, or before their start"},
    {"illegal address",
     "read or wrote outside its buffers (an illegal memory access): an index past the end of input, weights or "
     "output, or before their start"},
    {"misaligned address", "made a misaligned memory access (a pointer cast to a wider type than its address allows)"},
    {"unspecified launch failure",
     "trapped: it stopped on the GPU (a __trap(), or a fault the GPU does not name) and its results are lost"},
    {"illegal instruction", "trapped: it executed an illegal instruction (a __trap(), or a corrupted call)"},
    {"invalid program counter", "trapped: it jumped to an invalid address (a corrupted function pointer or stack)"},
    {"hardware stack error", "overflowed its stack (deep recursion or a large local array)"},
    {"launch timed out", "ran past the GPU's watchdog time limit (an endless loop?)"},
    {"too many resources requested",
     "cannot be launched: its block (CONVSCOPE_BLOCK_X x CONVSCOPE_BLOCK_Y threads) needs more registers or shared "
     "memory than a multiprocessor has"},
    {"invalid configuration argument",
     "cannot be launched: its block (CONVSCOPE_BLOCK_X x CONVSCOPE_BLOCK_Y) or grid does not fit the GPU's limits"},
    {"out of memory", "could not get the GPU memory it needs (out of GPU memory)"},
};

// "gpu/cuda_device.cu:119: cudaMemcpyAsync(...) failed: what" -> "what": ConvScope's own
// place and call are of no use to a student.
std::string withoutConvScopePlace(const std::string& error) {
  static const std::regex place(R"(^[^\s:]+:\d+: .* failed: (.*)$)");
  std::smatch m;
  if (std::regex_match(error, m, place)) return m[1].str();
  return error;
}

}  // namespace

std::string explainKernelFault(const std::string& error, const std::string& kernelOutput,
                               const std::string& studentFile) {
  if (contains(error, "device-side assert") || contains(error, "assert triggered")) {
    const KernelAssertion a = findKernelAssertion(kernelOutput);
    if (a.line > 0) return studentFile + ":" + std::to_string(a.line) + ": assertion failed: " + a.condition;
    return studentFile + ": an assertion in the kernel failed (assert(...) was false)";
  }
  for (const FaultWords& fault : kFaults)
    if (contains(error, fault.cuda)) return studentFile + ": the kernel " + fault.student;
  const std::string words = withoutConvScopePlace(error);
  // A message ConvScope wrote about the file already names it.
  if (words.find(std::filesystem::path(studentFile).filename().string()) != std::string::npos) return words;
  if (words != error) return studentFile + ": the kernel failed on the GPU: " + words;
  return studentFile + ": " + words;
}

}  // namespace convscope
