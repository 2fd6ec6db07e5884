// Declarations of the per-target CPU ops (the entries of CpuOps, cpu_ops.h) in
// tn::HWY_NAMESPACE::ops: defined by ops/gemm.cpp, ops/dense.cpp and ops/recurrent.cpp,
// gathered by cpu_ops.cpp. Per-target code: included once for every SIMD target.
#if defined(TN_CPU_OPS_DECL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_CPU_OPS_DECL_INL_H_
#undef TN_CPU_OPS_DECL_INL_H_
#else
#define TN_CPU_OPS_DECL_INL_H_
#endif

#include <hwy/highway.h>

#include "backend/cpu/cpu_ops.h"

HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace ops {

void gemm(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc);
void bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z, std::int64_t sZ,
                     const float* b, std::int64_t sb, float* A, std::int64_t sA);
void activation_backward(Activation act, float slope, int S, int rows, int cols, const float* Z, const float* A,
                         std::int64_t s, float* dA);
void bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db, std::int64_t sb);
void loss(const LossConfig& cfg, int S, int B, int O, const float* Z, std::int64_t sZ, const float* Y,
          std::int64_t sY, float* dZ, double* loss_sum, double* correct, const int* rows);
void output_transform(LossType loss, int S, int B, int O, const float* Z, std::int64_t sZ, float* P,
                      std::int64_t sP);
void sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2);
void optimizer_update(OptimizerType type, int S, std::int64_t n, float* P, const float* G, float* S1, float* S2,
                      std::int64_t stride, const OptStep* opt, float clip, const double* norm2);
void lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c, float* h,
                  std::int64_t sC);
void lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev, const float* c,
                   const float* dh, std::int64_t sC, float* dc, std::int64_t sdc, float* dG);
void gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh, std::int64_t sb,
                 const float* h_prev, float* h, std::int64_t sH);
void gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG, const float* h_prev,
                  const float* dh, std::int64_t sH, float* dGx, float* dGh, float* dh_prev);

}  // namespace ops
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_CPU_OPS_DECL_INL_H_
