// sgemm (util/gemm.h) against the product written here in double precision: every transpose,
// leading dimensions wider than the matrices, alpha and beta, and the shapes that take each path
// (one row as a matrix-vector product, few rows split by columns, many rows split by rows), with
// sizes that no thread count divides. C is poisoned where beta = 0 says it is not read.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "app/core/util/gemm.h"

namespace {

struct Shape {
  int m, n, k;
};

std::vector<float> randomValues(size_t count, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(rng);
  for (size_t i = 3; i < count; i += 29) values[i] = (i % 2 ? -50.0f : 50.0f);  // outliers
  return values;
}

TEST(Gemm, EveryTransposeAndPathAgainstADoubleProduct) {
  std::mt19937 rng(7);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Shape s : {Shape{1, 1000, 37}, Shape{1, 3, 5}, Shape{3, 1001, 19}, Shape{63, 257, 17}, Shape{64, 7, 9},
                        Shape{130, 301, 33}}) {
    for (const bool transA : {false, true})
      for (const bool transB : {false, true})
        for (const float beta : {0.0f, 0.5f}) {
          SCOPED_TRACE("m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " + std::to_string(s.k) +
                       (transA ? " A^T" : "") + (transB ? " B^T" : "") + " beta " + std::to_string(beta));
          // op(A) is m x k, op(B) is k x n; each stored with a leading dimension 3 wider.
          const int lda = (transA ? s.m : s.k) + 3, ldb = (transB ? s.k : s.n) + 3, ldc = s.n + 3;
          const std::vector<float> a = randomValues(static_cast<size_t>(transA ? s.k : s.m) * lda, rng);
          const std::vector<float> b = randomValues(static_cast<size_t>(transB ? s.n : s.k) * ldb, rng);
          std::vector<float> c = randomValues(static_cast<size_t>(s.m) * ldc, rng);
          if (beta == 0.0f)
            for (int i = 0; i < s.m; ++i)
              for (int j = 0; j < s.n; ++j) c[static_cast<size_t>(i) * ldc + j] = nan;
          const std::vector<float> before = c;
          const float alpha = 1.5f;
          convscope::sgemm(transA, transB, s.m, s.n, s.k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
          for (int i = 0; i < s.m; ++i)
            for (int j = 0; j < ldc; ++j) {
              const size_t at = static_cast<size_t>(i) * ldc + j;
              if (j >= s.n) {  // the padding of each row of C is left alone
                ASSERT_EQ(c[at], before[at]) << "padding " << i << ", " << j;
                continue;
              }
              double sum = 0.0, magnitude = 0.0;
              for (int p = 0; p < s.k; ++p) {
                const double x = transA ? a[static_cast<size_t>(p) * lda + i] : a[static_cast<size_t>(i) * lda + p];
                const double y = transB ? b[static_cast<size_t>(j) * ldb + p] : b[static_cast<size_t>(p) * ldb + j];
                sum += x * y;
                magnitude += std::fabs(x * y);
              }
              const double want = alpha * sum + (beta == 0.0f ? 0.0 : double{beta} * before[at]);
              ASSERT_NEAR(c[at], want, 1e-5 * (1.0 + std::fabs(alpha) * magnitude + std::fabs(want)))
                  << "row " << i << ", column " << j;
            }
        }
  }
}

}  // namespace
