// The CPU backend's arithmetic ops, compiled once for every SIMD target (Google Highway's
// foreach_target) and gathered into one table per target; CpuBackend runs the table of its
// target (cpu_target.h). Every op works on a block of S members, member stride given
// explicitly ([S, ...] tensors), member by member on the calling thread.
#pragma once
#include <cstdint>

#include "backend/backend.h"
#include "backend/cpu/cpu_target.h"
#include "math/activations.h"
#include "math/losses.h"
#include "math/optimizers.h"

namespace tn {

struct CpuOps {
  CpuTarget target;
  // One row-major GEMM C[M×N] = alpha·op(A)·op(B) + beta·C.
  void (*gemm)(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc);
  // Z[s] += b[s] (per row), A[s] = act(Z[s]); Z, A [S][rows×cols], b [S][cols].
  void (*bias_activation)(Activation act, float slope, int S, int rows, int cols, float* Z, std::int64_t sZ,
                          const float* b, std::int64_t sb, float* A, std::int64_t sA);
  // dA[s] *= act'(Z[s], A[s]); all [S][rows×cols] with member stride s.
  void (*activation_backward)(Activation act, float slope, int S, int rows, int cols, const float* Z,
                              const float* A, std::int64_t s, float* dA);
  // db[s] = column sums of dZ[s] [rows×cols].
  void (*bias_grad)(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db, std::int64_t sb);
  // Loss of logits Z [S][B×O] against Y [S][B×T] summed into loss_sum[s] and correct[s]
  // (the first rows[s] rows, all B when rows is null); dZ (null: none) gets its gradient
  // averaged over those rows, zero in the rest.
  void (*loss)(const LossConfig& cfg, int S, int B, int O, const float* Z, std::int64_t sZ, const float* Y,
               std::int64_t sY, float* dZ, double* loss_sum, double* correct, const int* rows);
  // P = softmax(Z), sigmoid(Z) or Z by loss; [S][B×O].
  void (*output_transform)(LossType loss, int S, int B, int O, const float* Z, std::int64_t sZ, float* P,
                           std::int64_t sP);
  // norm2[s] += Σ x[s]², in double.
  void (*sum_squares)(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2);
  // One optimizer step on n parameters per member, gradients clipped to norm `clip` (0: off).
  void (*optimizer_update)(OptimizerType type, int S, std::int64_t n, float* P, const float* G, float* S1,
                           float* S2, std::int64_t stride, const OptStep* opt, float clip, const double* norm2);
  // Recurrent cells on one time step (math/recurrent_cells.h; shapes in backend.h).
  void (*lstm_forward)(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c, float* h,
                       std::int64_t sC);
  void (*lstm_backward)(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev, const float* c,
                        const float* dh, std::int64_t sC, float* dc, std::int64_t sdc, float* dG);
  void (*gru_forward)(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh, std::int64_t sb,
                      const float* h_prev, float* h, std::int64_t sH);
  void (*gru_backward)(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG, const float* h_prev,
                       const float* dh, std::int64_t sH, float* dGx, float* dGh, float* dh_prev);
};

// The ops compiled for `t` (BackendError when this binary lacks it).
const CpuOps& cpu_ops(CpuTarget t);

}  // namespace tn
