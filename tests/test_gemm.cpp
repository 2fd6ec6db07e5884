// Checks CpuBackend::gemm_strided_batched against a naive loop of the column-major cuBLAS contract, and gemm_rm against a row-major loop.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "math/rng.h"

using namespace tn;

namespace {

constexpr float kSentinel = 12345.0f;

// Deterministic values in [-1, 1).
void fill_random(std::vector<float>& v, std::uint32_t stream) {
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = 2.0f * uniform01(random_words(2024, stream, Purpose::Data, i).v[0]) - 1.0f;
}

struct Shape {
  int m, n, k;
  int pad_a, pad_b, pad_c;  // extra leading-dimension elements
  int batch;
  int gap;                  // extra elements between consecutive batch matrices
  float alpha;
};

const Shape kShapes[] = {
    {1, 1, 1, 0, 0, 0, 1, 0, 1.0f},
    {2, 16, 3, 0, 0, 0, 1, 0, 1.0f},
    {7, 5, 3, 0, 0, 0, 1, 0, 1.0f},
    {7, 5, 3, 2, 3, 4, 3, 5, 0.75f},
    {1, 9, 4, 1, 0, 2, 2, 3, -1.5f},
    {13, 1, 11, 0, 1, 0, 4, 1, 2.0f},
    {16, 16, 16, 3, 0, 1, 2, 7, 1.0f},
    {31, 45, 7, 1, 2, 3, 2, 4, 1.0f},         // every column-strip width, 4-row tiles + remainder
    {3, 50, 20, 0, 1, 2, 3, 2, -0.5f},        // narrow C (few columns of the row-major product)
    {6, 13, 5, 2, 0, 1, 2, 0, 1.0f},
    {5, 6, 0, 0, 0, 0, 2, 1, 1.0f},           // k = 0: C = beta·C
    {63, 64, 64, 0, 0, 0, 1, 0, 1.0f},        // just below the OpenBLAS threshold
    {64, 64, 64, 1, 2, 3, 2, 9, 0.5f},        // exactly at it
    {80, 72, 96, 0, 0, 0, 1, 0, 1.0f},        // OpenBLAS path
    {80, 72, 96, 5, 3, 7, 2, 11, -0.25f},
};

// Element (r, c) of op(X) for a column-major X with leading dimension ld.
inline double op_at(const float* X, Trans t, int r, int c, int ld) {
  return t == Trans::N ? X[r + static_cast<std::int64_t>(c) * ld] : X[c + static_cast<std::int64_t>(r) * ld];
}

void check_colmajor(const Shape& s, Trans ta, Trans tb, float beta) {
  CpuBackend be(1);
  const int rows_a = ta == Trans::N ? s.m : s.k, cols_a = ta == Trans::N ? s.k : s.m;
  const int rows_b = tb == Trans::N ? s.k : s.n, cols_b = tb == Trans::N ? s.n : s.k;
  const int lda = std::max(1, rows_a + s.pad_a), ldb = std::max(1, rows_b + s.pad_b), ldc = s.m + s.pad_c;
  const std::int64_t sA = std::int64_t(lda) * cols_a + s.gap, sB = std::int64_t(ldb) * cols_b + s.gap,
                     sC = std::int64_t(ldc) * s.n + s.gap;
  std::vector<float> A(sA * s.batch + 1), B(sB * s.batch + 1), C(sC * s.batch + 1);
  fill_random(A, 1);
  fill_random(B, 2);
  fill_random(C, 3);
  // C: the m×n block of each matrix gets values (NaN when beta = 0), all else a sentinel.
  std::vector<bool> inside(C.size(), false);
  for (int p = 0; p < s.batch; ++p)
    for (int c = 0; c < s.n; ++c)
      for (int r = 0; r < s.m; ++r) inside[p * sC + r + std::int64_t(c) * ldc] = true;
  for (std::size_t i = 0; i < C.size(); ++i) {
    if (!inside[i]) C[i] = kSentinel;
    else if (beta == 0.0f) C[i] = std::numeric_limits<float>::quiet_NaN();
  }
  const std::vector<float> C0 = C;
  be.gemm_strided_batched(ta, tb, s.m, s.n, s.k, s.alpha, A.data(), lda, sA, B.data(), ldb, sB, beta,
                          C.data(), ldc, sC, s.batch);
  double max_err = 0;
  int bad = 0;
  for (int p = 0; p < s.batch; ++p) {
    const float* Ap = A.data() + p * sA;
    const float* Bp = B.data() + p * sB;
    for (int c = 0; c < s.n; ++c) {
      for (int r = 0; r < s.m; ++r) {
        double acc = 0, mag = 0;
        for (int q = 0; q < s.k; ++q) {
          const double x = op_at(Ap, ta, r, q, lda) * op_at(Bp, tb, q, c, ldb);
          acc += x;
          mag += std::abs(x);
        }
        const std::int64_t idx = p * sC + r + std::int64_t(c) * ldc;
        double ref = s.alpha * acc, refmag = std::abs(s.alpha) * mag;
        if (beta != 0.0f) {
          ref += beta * double(C0[idx]);
          refmag += std::abs(beta * double(C0[idx]));
        }
        const double err = std::abs(double(C[idx]) - ref);
        max_err = std::max(max_err, std::isfinite(C[idx]) ? err : INFINITY);
        if (!(err <= 1e-6 + 1e-5 * refmag)) ++bad;
      }
    }
  }
  int touched = 0;
  for (std::size_t i = 0; i < C.size(); ++i) touched += !inside[i] && C[i] != kSentinel;
  INFO("m n k = ", s.m, " ", s.n, " ", s.k, " batch ", s.batch, " ta ", int(ta), " tb ", int(tb),
       " alpha ", s.alpha, " beta ", beta, " max err ", max_err);
  CHECK(bad == 0);
  CHECK(touched == 0);
}

}  // namespace

TEST_CASE("gemm_strided_batched matches the column-major cuBLAS contract") {
  for (const Shape& s : kShapes)
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T})
        for (float beta : {0.0f, 1.0f, 0.5f}) check_colmajor(s, ta, tb, beta);
}

TEST_CASE("gemm_strided_batched: beta = 0 ignores NaN in C on both kernels") {
  CpuBackend be(1);
  for (int d : {4, 70}) {  // small kernel and OpenBLAS
    std::vector<float> A(d * d, 1.0f), B(d * d, 0.5f), C(d * d, std::numeric_limits<float>::quiet_NaN());
    be.gemm_strided_batched(Trans::N, Trans::N, d, d, d, 1.0f, A.data(), d, 0, B.data(), d, 0, 0.0f, C.data(), d, 0, 1);
    int wrong = 0;
    for (float c : C) wrong += c != 0.5f * d;
    INFO("d = ", d);
    CHECK(wrong == 0);
  }
}

namespace {

void check_rowmajor(int M, int N, int K, Trans ta, Trans tb, int pad, int batch, float alpha, float beta) {
  CpuBackend be(1);
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
  INFO("M N K = ", M, " ", N, " ", K, " ta ", int(ta), " tb ", int(tb), " max err ", max_err);
  CHECK(bad == 0);
  CHECK(touched == 0);
}

}  // namespace

TEST_CASE("gemm_rm matches a row-major reference") {
  for (Trans ta : {Trans::N, Trans::T}) {
    for (Trans tb : {Trans::N, Trans::T}) {
      check_rowmajor(1, 1, 1, ta, tb, 0, 1, 1.0f, 0.0f);
      check_rowmajor(4, 3, 5, ta, tb, 0, 1, 1.0f, 0.0f);
      check_rowmajor(3, 7, 2, ta, tb, 2, 3, 0.5f, 1.0f);
      check_rowmajor(6, 1, 9, ta, tb, 1, 2, -2.0f, 0.5f);
      check_rowmajor(21, 3, 6, ta, tb, 2, 2, 1.0f, 0.0f);   // narrow C
      // Narrow C with k long enough for dot products along it (op(A) = A): odd rows, k tails.
      check_rowmajor(33, 2, 256, ta, tb, 1, 2, 1.0f, 0.0f);
      check_rowmajor(17, 7, 37, ta, tb, 2, 2, 0.5f, 1.0f);
      check_rowmajor(40, 1, 16, ta, tb, 0, 1, -1.0f, 0.5f);
      check_rowmajor(9, 37, 4, ta, tb, 0, 1, 1.5f, 1.0f);
      check_rowmajor(70, 65, 90, ta, tb, 3, 2, 1.0f, 0.5f);  // OpenBLAS path
    }
  }
}

TEST_CASE("gemm: large products from two member blocks at once give the same bits as one at a time") {
  // Products above the small-GEMM threshold go to OpenBLAS from every worker thread at once;
  // a BLAS build that shares its work buffer between callers returns wrong products here.
  CpuBackend be(2);
  const int M = 32, N = 128, K = 608, reps = 4000;
  std::vector<float> A[2], B[2], ref[2];
  for (int t = 0; t < 2; ++t) {
    A[t].resize(static_cast<std::size_t>(K) * M);
    B[t].resize(static_cast<std::size_t>(K) * N);
    fill_random(A[t], 300 + t);
    fill_random(B[t], 310 + t);
    ref[t].assign(static_cast<std::size_t>(M) * N, 0.0f);
    cpu_gemm_rowmajor(Trans::T, Trans::N, M, N, K, 1.0f, A[t].data(), M, B[t].data(), N, 0.0f, ref[t].data(), N);
  }
  int wrong[2] = {0, 0};
  be.for_each_block(2, 1, [&](int b0, int, int) {
    std::vector<float> C(static_cast<std::size_t>(M) * N);
    for (int r = 0; r < reps; ++r) {
      cpu_gemm_rowmajor(Trans::T, Trans::N, M, N, K, 1.0f, A[b0].data(), M, B[b0].data(), N, 0.0f, C.data(), N);
      if (C != ref[b0]) ++wrong[b0];
    }
  });
  CHECK(wrong[0] == 0);
  CHECK(wrong[1] == 0);
}
