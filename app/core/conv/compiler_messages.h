// What the compiler says about a student's kernel, in the student's terms: NVRTC's log without
// the lines about ConvScope's own additions (the contract's check, the name lookup), the
// assembler's refusals (ptxas, which reports sizes in hexadecimal and names no line) put on the
// line of the declaration they are about, in decimal, and where in the file the contract's
// declarations are. Plain C++ over text, so that it is tested without a compiler.
#pragma once

#include <string>
#include <vector>

#include "app/core/conv/user_kernel_source.h"

namespace convscope {

// The kernel's text with every comment, string and character literal blanked (the same length,
// newlines kept), so that a search for a declaration finds code only.
std::string kernelCodeOnly(const std::string& text);

// The lines (1-based) where convscope_conv's declaration begins and ends (its parameter list's
// closing parenthesis); {0, 0} where the file names no convscope_conv followed by '('.
struct LineRange {
  int first = 0, last = 0;
  bool contains(int line) const { return line >= first && line <= last && first > 0; }
};
LineRange kernelDeclarationLines(const std::string& text);

// The lines that declare __shared__ variables: all of them, or only `extern __shared__` ones.
std::vector<int> sharedDeclarationLines(const std::string& text, bool externOnly);

// The assembler's errors in `log` ("ptxas error   : Entry function 'convscope_conv' uses too much
// shared data (0x40ed0 bytes, 0xc000 max)") as diagnostics of `file`, with sizes in decimal and
// the line of the declaration they are about where the text shows one. Empty: none in the log.
std::vector<KernelDiagnostic> assemblerErrors(const std::string& log, const std::string& file, const std::string& text,
                                              const std::string& architecture);

// NVRTC's log as a student should read it: without the messages about ConvScope's additions to
// the file (the pseudo-files "convscope-contract" and "__nv_name_map") and without the
// assembler's information lines. `onlyLines` set: only the messages about those lines are kept.
std::string studentCompilerLog(const std::string& log, const LineRange* onlyLines = nullptr);

}  // namespace convscope
