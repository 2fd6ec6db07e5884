// gemm_rm against a row-major loop on every SIMD target, and OpenBLAS called from two member blocks at once. (The
// column-major contract of gemm_strided_batched itself, beta = 0 with NaN in C included, is in
// the op table, tests/op_table.cpp, run on every backend by tests/test_ops.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "math/rng.h"
#include "target_test_util.h"

using namespace tn;

namespace {

// Deterministic values in [-1, 1).
void fill_random(std::vector<float>& v, std::uint32_t stream) {
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = 2.0f * uniform01(random_words(2024, stream, Purpose::Data, i).v[0]) - 1.0f;
}

void check_rowmajor(CpuTarget target, int M, int N, int K, Trans ta, Trans tb, int pad, int batch, float alpha,
                    float beta) {
  CpuBackend be(1, target);
  const int rows_a = ta == Trans::N ? M : K, cols_a = ta == Trans::N ? K : M;
  const int rows_b = tb == Trans::N ? K : N, cols_b = tb == Trans::N ? N : K;
  const int lda = cols_a + pad, ldb = cols_b + pad, ldc = N + pad;
  const std::int64_t sA = std::int64_t(lda) * rows_a + 3, sB = std::int64_t(ldb) * rows_b + 2,
                     sC = std::int64_t(ldc) * M + 1;
  std::vector<float> A(sA * batch), B(sB * batch), C(sC * batch);
  fill_random(A, 11);
  fill_random(B, 12);
  fill_random(C, 13);
  const std::vector<float> C0 = C;
  gemm_rm(be, ta, tb, M, N, K, alpha, A.data(), lda, sA, B.data(), ldb, sB, beta, C.data(), ldc, sC, batch);
  // Row-major: element (i, j) at [i·ld + j].
  auto at = [](const float* X, Trans t, int i, int j, int ld) {
    return double(t == Trans::N ? X[std::int64_t(i) * ld + j] : X[std::int64_t(j) * ld + i]);
  };
  double max_err = 0;
  int bad = 0, touched = 0;
  for (int p = 0; p < batch; ++p) {
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double acc = 0, mag = 0;
        for (int q = 0; q < K; ++q) {
          const double x = at(A.data() + p * sA, ta, i, q, lda) * at(B.data() + p * sB, tb, q, j, ldb);
          acc += x;
          mag += std::abs(x);
        }
        const std::int64_t idx = p * sC + std::int64_t(i) * ldc + j;
        const double ref = alpha * acc + beta * double(C0[idx]);
        const double err = std::abs(C[idx] - ref);
        max_err = std::max(max_err, err);
        if (!(err <= 1e-6 + 1e-5 * (std::abs(alpha) * mag + std::abs(beta * C0[idx])))) ++bad;
      }
      for (int j = N; j < ldc; ++j) touched += C[p * sC + std::int64_t(i) * ldc + j] != C0[p * sC + std::int64_t(i) * ldc + j];
    }
  }
  INFO(to_string(target), ": M N K = ", M, " ", N, " ", K, " ta ", int(ta), " tb ", int(tb), " max err ", max_err);
  CHECK(bad == 0);
  CHECK(touched == 0);
}

}  // namespace

TEST_CASE("gemm_rm matches a row-major reference, on every SIMD target") {
  for (CpuTarget t : targets_here())
  for (Trans ta : {Trans::N, Trans::T}) {
    for (Trans tb : {Trans::N, Trans::T}) {
      check_rowmajor(t, 1, 1, 1, ta, tb, 0, 1, 1.0f, 0.0f);
      check_rowmajor(t, 4, 3, 5, ta, tb, 0, 1, 1.0f, 0.0f);
      check_rowmajor(t, 3, 7, 2, ta, tb, 2, 3, 0.5f, 1.0f);
      check_rowmajor(t, 6, 1, 9, ta, tb, 1, 2, -2.0f, 0.5f);
      check_rowmajor(t, 21, 3, 6, ta, tb, 2, 2, 1.0f, 0.0f);   // narrow C
      // Narrow C with k long enough for dot products along it (op(A) = A): odd rows, k tails.
      check_rowmajor(t, 33, 2, 256, ta, tb, 1, 2, 1.0f, 0.0f);
      check_rowmajor(t, 17, 7, 37, ta, tb, 2, 2, 0.5f, 1.0f);
      check_rowmajor(t, 40, 1, 16, ta, tb, 0, 1, -1.0f, 0.5f);
      check_rowmajor(t, 9, 37, 4, ta, tb, 0, 1, 1.5f, 1.0f);
      check_rowmajor(t, 70, 65, 90, ta, tb, 3, 2, 1.0f, 0.5f);  // OpenBLAS path
    }
  }
}

TEST_CASE("gemm: large products from two member blocks at once give the same bits as one at a time") {
  // Products above the small-GEMM threshold go to OpenBLAS from every worker thread at once;
  // a BLAS build that shares its work buffer between callers returns wrong products here.
  CpuBackend be(2);
  const auto gemm = cpu_ops(be.target()).gemm;
  const int M = 32, N = 128, K = 608, reps = 4000;
  std::vector<float> A[2], B[2], ref[2];
  for (int t = 0; t < 2; ++t) {
    A[t].resize(static_cast<std::size_t>(K) * M);
    B[t].resize(static_cast<std::size_t>(K) * N);
    fill_random(A[t], 300 + t);
    fill_random(B[t], 310 + t);
    ref[t].assign(static_cast<std::size_t>(M) * N, 0.0f);
    gemm(Trans::T, Trans::N, M, N, K, 1.0f, A[t].data(), M, B[t].data(), N, 0.0f, ref[t].data(), N);
  }
  int wrong[2] = {0, 0};
  be.for_each_block(2, 1, [&](int b0, int, int) {
    std::vector<float> C(static_cast<std::size_t>(M) * N);
    for (int r = 0; r < reps; ++r) {
      gemm(Trans::T, Trans::N, M, N, K, 1.0f, A[b0].data(), M, B[b0].data(), N, 0.0f, C.data(), N);
      if (C != ref[b0]) ++wrong[b0];
    }
  });
  CHECK(wrong[0] == 0);
  CHECK(wrong[1] == 0);
}
