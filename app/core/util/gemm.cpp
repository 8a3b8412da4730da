#include "app/core/util/gemm.h"

#include <vector>

#include <omp.h>

#include <algorithm>

#ifdef CONVSCOPE_HAVE_BLAS
#include <cblas.h>
#endif

namespace convscope {

#ifdef CONVSCOPE_HAVE_BLAS

namespace {

// OpenBLAS's own threads spin while ConvScope's OpenMP threads work, and the two fight over the
// cores. So OpenBLAS runs single-threaded and parallelism comes from OpenMP: across images in
// the conv backend, across row blocks of C here.
const bool blasSingleThreaded = [] {
  openblas_set_num_threads(1);
  return true;
}();

void blasGemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
              int ldb, float beta, float* c, int ldc) {
  if (m == 1) {
    // One row of C (a classifier at batch 1): a matrix-vector product, which reads B once where
    // sgemm would first copy it into its packed layout (5 MB for a 1,280 x 1,000 classifier).
    const int step = transA ? lda : 1;  // op(A)'s one row: a column of A when A is transposed
    if (transB)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, alpha, b, ldb, a, step, beta, c, 1);
    else
      cblas_sgemv(CblasRowMajor, CblasTrans, k, n, alpha, b, ldb, a, step, beta, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
              lda, b, ldb, beta, c, ldc);
}

}  // namespace

void sgemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  (void)blasSingleThreaded;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads == 1 || (m < 64 && n < 256))
    return blasGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  // Each thread one block of `extent` rows (or columns) of C: run(first, count).
  const auto split = [threads](int extent, const auto& run) {
    const int block = (extent + threads - 1) / threads;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < threads; ++t) {
      const int first = t * block;
      if (const int count = std::min(block, extent - first); count > 0) run(first, count);
    }
  };
  if (m < 64) {
    // Few rows (a classifier at a small batch): the threads split the columns, each reading its
    // share of B. Column j of op(B) is row j of B when B is transposed, else column j.
    split(n, [&](int first, int columns) {
      const float* bBlock = transB ? b + static_cast<size_t>(first) * ldb : b + first;
      blasGemm(transA, transB, m, columns, k, alpha, a, lda, bBlock, ldb, beta, c + first, ldc);
    });
    return;
  }
  split(m, [&](int first, int rows) {
    // Row i of op(A) is row i of A, or column i when A is transposed.
    const float* aBlock = transA ? a + first : a + static_cast<size_t>(first) * lda;
    blasGemm(transA, transB, rows, n, k, alpha, aBlock, lda, b, ldb, beta, c + static_cast<size_t>(first) * ldc, ldc);
  });
}

const char* gemmImplementation() {
  return "OpenBLAS";
}

#else

void sgemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  // Rows of C are independent; the i-p-j order streams rows of B and C contiguously. Each
  // thread's accumulator row is allocated before the parallel region: an exception (bad_alloc)
  // escaping a region would end the process.
  const int threads = omp_get_max_threads();
  std::vector<float> rows(static_cast<size_t>(threads) * static_cast<size_t>(n));
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int i = 0; i < m; ++i) {
    float* row = rows.data() + static_cast<size_t>(omp_get_thread_num()) * static_cast<size_t>(n);
    std::fill_n(row, n, 0.0f);
    for (int p = 0; p < k; ++p) {
      const float aip = transA ? a[static_cast<size_t>(p) * lda + i] : a[static_cast<size_t>(i) * lda + p];
      if (transB) {
        for (int j = 0; j < n; ++j) row[j] += aip * b[static_cast<size_t>(j) * ldb + p];
      } else {
        const float* bRow = b + static_cast<size_t>(p) * ldb;
        for (int j = 0; j < n; ++j) row[j] += aip * bRow[j];
      }
    }
    float* cRow = c + static_cast<size_t>(i) * ldc;
    for (int j = 0; j < n; ++j) cRow[j] = alpha * row[j] + (beta == 0.0f ? 0.0f : beta * cRow[j]);
  }
}

const char* gemmImplementation() {
  return "built-in loops";
}

#endif

}  // namespace convscope
