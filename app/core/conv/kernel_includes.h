// Which files a student's kernel may #include. A kernel file is untrusted: NVRTC opens whatever
// an #include names (an absolute path, or a file in the current folder) and quotes that file's
// text back in its error messages, so a submission could read any file of the grading machine.
// ConvScope therefore refuses, before the compiler sees the file, every #include (and
// __has_include) except ConvScope's own header and a short list of the CUDA toolkit's device
// headers, and every way of writing the file that could make the compiler read it otherwise than
// this check does (trigraphs, a backslash before blanks at a line's end, a lone CR, a NUL, ##,
// a raw string over several lines, #line, unknown pragmas).
//
// The scan errs on the side of refusing: it checks every place where any reading of the file
// could begin a directive, whether that place lies in code, a comment or a string, since telling
// those apart exactly would need a second preprocessor (and NVRTC itself lexes a skipped #if group
// differently from compiled code).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/core/conv/user_kernel_source.h"

namespace convscope {

// The headers a kernel may name: <mma.h>, <cuda_fp16.h>, ... (angle brackets) and
// "convscope_kernel.h" (pre-included anyway).
const std::vector<std::string>& allowedKernelHeaders();
inline constexpr const char* kConvScopeKernelHeaderName = "convscope_kernel.h";

// The pragmas a kernel may use (#pragma unroll, ...), in #pragma and in _Pragma("...").
const std::vector<std::string>& allowedKernelPragmas();

// One refusal per offending directive or character sequence, "file:line: <what> is refused:
// <why>" in the student's terms, in line order (at most the first 100). Linear in the text's size.
std::vector<KernelDiagnostic> refusedKernelIncludes(const std::string& file, std::string_view text);

}  // namespace convscope
