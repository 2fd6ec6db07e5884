// CPU GEMM kernels. Small products (the common case in a swarm) run in register-blocked
// loops: each block of R output rows keeps R×W accumulators in vector registers while
// streaming rows of B, oriented so that the wide side of C is the vectorized one. Large
// products go to OpenBLAS, single-threaded per call because parallelism comes from running
// member blocks on separate threads. Every choice depends only on the shape, so all members
// of a swarm take the same path and get the same rounding. Compiled once for every SIMD
// target (foreach_target): the loops are plain C++ that the compiler vectorizes for it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backend/cpu/ops/gemm.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/ops/decl-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace ops {
namespace {

// Products with at least this many multiply-adds go to OpenBLAS.
constexpr long kBlasThreshold = 64L * 64 * 64;

// Rows per register tile of a 32-column strip: 8 × 32 accumulators fill half of AVX-512's 32
// vector registers (16 zmm) and leave room for the B row and the broadcast A values; AVX2's
// 16 registers hold a 4 × 32 tile. Per output element the sum over k runs in the same order
// whatever the tile, so the tile size never changes a result.
constexpr int kTileRows = HWY_TARGET == HWY_AVX3 ? 8 : 4;

// Element (i, k) of op(A) for row-major storage. The transpose is a compile-time choice: a
// run-time flag left a branch in the innermost loop, which kept thin tiles (one row) scalar.
template <bool Trans>
struct OpA {
  const float* A;
  int lda;
  float operator()(int i, int k) const {
    return Trans ? A[static_cast<std::int64_t>(k) * lda + i] : A[static_cast<std::int64_t>(i) * lda + k];
  }
};

// C[i0..i0+R, j0..j0+W) = alpha · Σ_k op(A)(i, k) · Bn[k, j] + beta · C; Bn row-major K×·.
template <int R, int W, class OpA>
inline void tile(const OpA& a, int i0, int j0, int K, float alpha, const float* Bn, int ldb,
                 float beta, float* C, int ldc) {
  float acc[R][W] = {};
  for (int k = 0; k < K; ++k) {
    const float* __restrict b = Bn + static_cast<std::int64_t>(k) * ldb + j0;
    for (int r = 0; r < R; ++r) {
      const float av = a(i0 + r, k);
      for (int w = 0; w < W; ++w) acc[r][w] += av * b[w];
    }
  }
  for (int r = 0; r < R; ++r) {
    float* __restrict c = C + static_cast<std::int64_t>(i0 + r) * ldc + j0;
    if (beta == 0.0f) {
      for (int w = 0; w < W; ++w) c[w] = alpha * acc[r][w];
    } else {
      for (int w = 0; w < W; ++w) c[w] = alpha * acc[r][w] + beta * c[w];
    }
  }
}

// All rows for columns [j0, j0 + W): blocks of kTileRows rows (wide strips), of 4, then
// single rows.
template <int W, class OpA>
inline void column_strip(const OpA& a, int M, int j0, int K, float alpha, const float* Bn, int ldb,
                         float beta, float* C, int ldc) {
  int i = 0;
  if constexpr (W >= 16 && kTileRows > 4)
    for (; i + kTileRows <= M; i += kTileRows) tile<kTileRows, W>(a, i, j0, K, alpha, Bn, ldb, beta, C, ldc);
  for (; i + 4 <= M; i += 4) tile<4, W>(a, i, j0, K, alpha, Bn, ldb, beta, C, ldc);
  for (; i < M; ++i) tile<1, W>(a, i, j0, K, alpha, Bn, ldb, beta, C, ldc);
}

// C[M×N] = alpha·op(A)·Bn + beta·C, with N split into strips of 32, 16, 8, 4, 2, 1 columns.
template <class OpA>
void small_gemm(const OpA& a, int M, int N, int K, float alpha, const float* Bn, int ldb,
                float beta, float* C, int ldc) {
  int j = 0;
  for (; j + 32 <= N; j += 32) column_strip<32>(a, M, j, K, alpha, Bn, ldb, beta, C, ldc);
  if (j + 16 <= N) { column_strip<16>(a, M, j, K, alpha, Bn, ldb, beta, C, ldc); j += 16; }
  if (j + 8 <= N) { column_strip<8>(a, M, j, K, alpha, Bn, ldb, beta, C, ldc); j += 8; }
  if (j + 4 <= N) { column_strip<4>(a, M, j, K, alpha, Bn, ldb, beta, C, ldc); j += 4; }
  if (j + 2 <= N) { column_strip<2>(a, M, j, K, alpha, Bn, ldb, beta, C, ldc); j += 2; }
  if (j < N) column_strip<1>(a, M, j, K, alpha, Bn, ldb, beta, C, ldc);
}

// Narrow C whose op(A) rows are contiguous along k: each element of C is a dot product of a
// row of A with a row of Bt (op(B)ᵀ, N×K row-major). Two rows of C at a time with all N
// elements of each: 2N independent vector accumulators hide the multiply-add latency. Each
// element's lanes sum every kVec-th k in order, then add up lane by lane and the tail k's:
// a fixed order, independent of where the row lies.
constexpr int kVec = HWY_TARGET == HWY_AVX3 ? 16 : HWY_TARGET == HWY_AVX2 ? 8 : 4;
typedef float VecK __attribute__((vector_size(kVec * sizeof(float))));

template <int N, int R>
inline void row_dots_rows(int i0, int K, float alpha, const float* A, int lda, const float* Bt, int ldbt,
                          float beta, float* C, int ldc) {
  VecK acc[R][N] = {};
  int k = 0;
  for (; k + kVec <= K; k += kVec) {
    VecK b[N];
    for (int j = 0; j < N; ++j) std::memcpy(&b[j], Bt + static_cast<std::int64_t>(j) * ldbt + k, sizeof(VecK));
    for (int r = 0; r < R; ++r) {
      VecK a;
      std::memcpy(&a, A + static_cast<std::int64_t>(i0 + r) * lda + k, sizeof a);
      for (int j = 0; j < N; ++j) acc[r][j] += a * b[j];
    }
  }
  for (int r = 0; r < R; ++r) {
    const float* a = A + static_cast<std::int64_t>(i0 + r) * lda;
    float* c = C + static_cast<std::int64_t>(i0 + r) * ldc;
    for (int j = 0; j < N; ++j) {
      const float* b = Bt + static_cast<std::int64_t>(j) * ldbt;
      float sum = 0.0f;
      for (int l = 0; l < kVec; ++l) sum += acc[r][j][l];
      for (int kk = k; kk < K; ++kk) sum += a[kk] * b[kk];
      c[j] = beta == 0.0f ? alpha * sum : alpha * sum + beta * c[j];
    }
  }
}

template <int N>
void row_dots_n(int M, int K, float alpha, const float* A, int lda, const float* Bt, int ldbt, float beta,
                float* C, int ldc) {
  int i = 0;
  for (; i + 2 <= M; i += 2) row_dots_rows<N, 2>(i, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
  if (i < M) row_dots_rows<N, 1>(i, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
}

// C[M×N] = alpha·A·Btᵀ + beta·C for N < 8.
void row_dots(int M, int N, int K, float alpha, const float* A, int lda, const float* Bt, int ldbt, float beta,
              float* C, int ldc) {
  switch (N) {
    case 1: return row_dots_n<1>(M, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
    case 2: return row_dots_n<2>(M, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
    case 3: return row_dots_n<3>(M, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
    case 4: return row_dots_n<4>(M, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
    case 5: return row_dots_n<5>(M, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
    case 6: return row_dots_n<6>(M, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
    default: return row_dots_n<7>(M, K, alpha, A, lda, Bt, ldbt, beta, C, ldc);
  }
}

// Row-major copy of the transpose of X (rows × cols, leading dimension ld) into `out`.
const float* transposed(const float* X, int rows, int cols, int ld, std::vector<float>& out) {
  out.resize(static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[static_cast<std::size_t>(c) * rows + r] = X[static_cast<std::int64_t>(r) * ld + c];
  return out.data();
}

}  // namespace

void gemm(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc) {
  if (M <= 0 || N <= 0) return;
  if (static_cast<long>(M) * N * K >= kBlasThreshold) {
    cblas_sgemm(CblasRowMajor, ta == Trans::N ? CblasNoTrans : CblasTrans,
                tb == Trans::N ? CblasNoTrans : CblasTrans, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc);
    return;
  }
  thread_local std::vector<float> pack, outT;
  if (N >= 8 || M < 2 * N) {
    // Direct: vectorize along C's rows; B is needed row-major K×N.
    const float* Bn = tb == Trans::N ? B : transposed(B, N, K, ldb, pack);
    const int ld = tb == Trans::N ? ldb : N;
    if (ta == Trans::T) small_gemm(OpA<true>{A, lda}, M, N, K, alpha, Bn, ld, beta, C, ldc);
    else small_gemm(OpA<false>{A, lda}, M, N, K, alpha, Bn, ld, beta, C, ldc);
    return;
  }
  if (ta == Trans::N && K >= kVec) {
    // Narrow C, A's rows contiguous along k (a layer's forward to few outputs): dot products.
    // op(B)ᵀ is B itself when tb = T, else a copy of the small K×N matrix.
    const float* Bt = tb == Trans::T ? B : transposed(B, K, N, ldb, pack);
    row_dots(M, N, K, alpha, A, lda, Bt, tb == Trans::T ? ldb : K, beta, C, ldc);
    return;
  }
  // Narrow C (few columns, many rows): compute Cᵀ [N×M] = op(B)ᵀ·op(A)ᵀ, vectorized along
  // M, then store it transposed. op(A)ᵀ is needed row-major K×M: stored A when ta = T.
  const float* An = ta == Trans::T ? A : transposed(A, M, K, lda, pack);
  outT.resize(static_cast<std::size_t>(N) * M);
  const int ld = ta == Trans::T ? lda : M;
  if (tb == Trans::N) small_gemm(OpA<true>{B, ldb}, N, M, K, 1.0f, An, ld, 0.0f, outT.data(), M);
  else small_gemm(OpA<false>{B, ldb}, N, M, K, 1.0f, An, ld, 0.0f, outT.data(), M);
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<std::int64_t>(i) * ldc;
    for (int j = 0; j < N; ++j) {
      const float v = alpha * outT[static_cast<std::size_t>(j) * M + i];
      c[j] = beta == 0.0f ? v : v + beta * c[j];
    }
  }
}

}  // namespace ops
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();
