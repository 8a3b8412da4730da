// Which files a student's kernel may #include. A kernel file is untrusted: NVRTC opens whatever
// an #include names (an absolute path, or a file in the current folder) and quotes that file's
// text back in its error messages, so a submission could read any file of the grading machine.
// ConvScope therefore refuses, before the compiler sees the file, every #include (and
// __has_include) except ConvScope's own header and a short list of the CUDA toolkit's device
// headers. The scan errs on the side of refusing: a directive-like line inside a comment or a
// raw string is refused too, since telling those apart exactly would need a second preprocessor.
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

// One refusal per offending directive, "file:line: ..." in the student's terms.
std::vector<KernelDiagnostic> refusedKernelIncludes(const std::string& file, std::string_view text);

}  // namespace convscope
