// Single-precision matrix multiply, row-major: C = alpha * op(A) * op(B) + beta * C, where op
// transposes when asked. Uses the system BLAS (OpenBLAS from Debian) when the build found one and
// a cache-friendly threaded loop otherwise, so every caller has one function to call.
#pragma once

namespace convscope {

void sgemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc);

// "OpenBLAS" or "built-in loops": shown by `convscope-cli variants`.
const char* gemmImplementation();

}  // namespace convscope
