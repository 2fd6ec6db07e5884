// CPU GEMM kernels. Small products (the common case in a swarm) run in register-friendly
// loops vectorized along the output row; large ones go to OpenBLAS, single-threaded per
// call because parallelism comes from running member blocks on separate threads. The
// choice depends only on the shape, so every member of a swarm takes the same path.
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"

namespace tn {
namespace {

// Products with at least this many multiply-adds go to OpenBLAS.
constexpr long kBlasThreshold = 64L * 64 * 64;

// C[M×N] (+)= alpha·op(A)·Bn with Bn row-major K×N (leading dimension ldb).
void small_gemm(Trans ta, int M, int N, int K, float alpha, const float* A, int lda,
                const float* Bn, int ldb, float beta, float* C, int ldc) {
  for (int i = 0; i < M; ++i) {
    float* __restrict c = C + static_cast<std::int64_t>(i) * ldc;
    if (beta == 0.0f) {
      std::fill(c, c + N, 0.0f);
    } else if (beta != 1.0f) {
      for (int j = 0; j < N; ++j) c[j] *= beta;
    }
    for (int k = 0; k < K; ++k) {
      const float a = alpha * (ta == Trans::N ? A[static_cast<std::int64_t>(i) * lda + k]
                                              : A[static_cast<std::int64_t>(k) * lda + i]);
      const float* __restrict b = Bn + static_cast<std::int64_t>(k) * ldb;
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

}  // namespace

void cpu_gemm_rowmajor(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A,
                       int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  if (M <= 0 || N <= 0) return;
  if (static_cast<long>(M) * N * K >= kBlasThreshold) {
    cblas_sgemm(CblasRowMajor, ta == Trans::N ? CblasNoTrans : CblasTrans,
                tb == Trans::N ? CblasNoTrans : CblasTrans, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc);
    return;
  }
  if (tb == Trans::N) {
    small_gemm(ta, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  // op(B) = Bᵀ: pack it row-major K×N so the inner loop runs along contiguous memory.
  thread_local std::vector<float> packed;
  packed.resize(static_cast<std::size_t>(K) * N);
  for (int j = 0; j < N; ++j)
    for (int k = 0; k < K; ++k) packed[static_cast<std::size_t>(k) * N + j] = B[static_cast<std::int64_t>(j) * ldb + k];
  small_gemm(ta, M, N, K, alpha, A, lda, packed.data(), N, beta, C, ldc);
}

void CpuBackend::gemm_strided_batched(Trans ta, Trans tb, int m, int n, int k, float alpha,
                                      const float* A, int lda, std::int64_t strideA,
                                      const float* B, int ldb, std::int64_t strideB, float beta,
                                      float* C, int ldc, std::int64_t strideC, int batch) {
  // Column-major C (m×n) = op(A)·op(B) is row-major Cᵀ (n×m) = op(B)ᵀ·op(A)ᵀ, and a
  // column-major matrix read row-major is its transpose: swap the operands.
  for (int p = 0; p < batch; ++p)
    cpu_gemm_rowmajor(tb, ta, n, m, k, alpha, B + p * strideB, ldb, A + p * strideA, lda, beta,
                      C + p * strideC, ldc);
}

}  // namespace tn
