// libFuzzer target: arbitrary bytes as a student's .cu file. The contract parser (the CONVSCOPE_*
// macros, the kernel's signature) must list a broken file's problems, never crash, hang or throw
// anything but convscope::Error; a file it accepts must give a launch geometry that computes
// every output pixel of a small problem without overflowing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/conv/user_kernel_source.h"
#include "app/core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const convscope::UserKernelSource source = convscope::parseUserKernelSource("fuzz.cu", text);
    for (const convscope::KernelDiagnostic& problem : source.problems)
      if (problem.text().rfind("fuzz.cu", 0) != 0) std::abort();  // every problem names the file
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
