// The CPU backend: the reference implementation of every op. Blocks of members run in
// parallel on OpenMP threads; inside a block, ops run member by member on one thread, so a
// member's arithmetic never depends on the thread count or on which members share a block.
// The arithmetic runs the CpuOps table (cpu_ops.h) of the backend's SIMD target.
#pragma once
#include "backend/backend.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/cpu_target.h"

namespace tn {

class CpuBackend final : public Backend {
 public:
  // threads: worker threads, 0 for one per hardware thread; more than the hardware has are
  // capped to it, with a warning. target: the SIMD target of the kernels (by default the
  // process's: the best this CPU runs, or TURBANET_CPU_TARGET).
  explicit CpuBackend(int threads, CpuTarget target = default_cpu_target());
  std::string name() const override { return "cpu"; }
  std::string describe() const override;
  int workers() const override { return threads_; }
  CpuTarget target() const { return target_; }

  void* alloc_bytes(std::size_t bytes) override;
  bool host_memory() const override { return true; }
  void release(void* p) override;
  void to_device(void* dst, const void* src, std::size_t bytes) override;
  void to_host(void* dst, const void* src, std::size_t bytes) override;
  void fill_zero(void* dst, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  int block_members(int S, std::int64_t bytes_per_member) const override;
  void for_each_block(int S, int max_block, const std::function<void(int, int, int)>& fn) override;

  std::vector<std::unique_ptr<StepKernel>> step_kernels(const ModelShape& shape, int batch,
                                                        std::string* why) override;

  void gemm_strided_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* A,
                            int lda, std::int64_t strideA, const float* B, int ldb,
                            std::int64_t strideB, float beta, float* C, int ldc,
                            std::int64_t strideC, int batch) override;
  void bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z,
                       std::int64_t sZ, const float* b, std::int64_t sb, float* A,
                       std::int64_t sA) override;
  void activation_backward(Activation act, float slope, int S, int rows, int cols, const float* Z,
                           const float* A, std::int64_t s, float* dA) override;
  void dropout(int S, int rows, int cols, const float* X, std::int64_t sX, float* Y, std::int64_t sY,
               const DropoutKey& key) override;
  void bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db,
                 std::int64_t sb) override;
  void loss_backward(const LossConfig& loss, int S, int B, int O, const float* Z, std::int64_t sZ,
                     const float* Y, std::int64_t sY, float* dZ, double* loss_sum,
                     double* correct, const int* rows) override;
  void loss_forward(const LossConfig& loss, int S, int B, int O, const float* Z, std::int64_t sZ,
                    const float* Y, std::int64_t sY, double* loss_sum, double* correct,
                    const int* rows) override;
  void output_transform(LossType loss, int S, int B, int O, const float* Z, std::int64_t sZ,
                        float* P, std::int64_t sP) override;
  void gather_batch(const BatchSampler& sampler, std::uint32_t member0, int S, std::uint32_t pos0,
                    int B, const float* X, int F, const float* Y, int Ty, float* Xb,
                    std::int64_t sXb, float* Yb, std::int64_t sYb, const float* Ystats = nullptr) override;
  void to_time_major(int S, int B, int T, int F, const float* src, std::int64_t ss, float* dst,
                     std::int64_t sd) override;
  void lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c, float* h,
                    std::int64_t sC) override;
  void lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev, const float* c,
                     const float* dh, std::int64_t sC, float* dc, std::int64_t sdc, float* dG) override;
  void gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh, std::int64_t sb,
                   const float* h_prev, float* h, std::int64_t sH) override;
  void gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG, const float* h_prev,
                    const float* dh, std::int64_t sH, float* dGx, float* dGh, float* dh_prev) override;
  void sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2) override;
  void freeze_diverged(int S, const double* loss_sum, int* frozen, OptStep* opt) override;
  void optimizer_update(OptimizerType type, int S, std::int64_t n, float* P, const float* G,
                        float* S1, float* S2, std::int64_t stride, const OptStep* opt,
                        float clip, const double* norm2) override;

 private:
  int threads_;
  CpuTarget target_;
  const CpuOps& ops_;
};

// Sets flush-to-zero and denormals-are-zero on the calling thread (x86: MXCSR, aarch64: FPCR;
// every worker does before running a block; for_each_block gives the thread that called it
// its own mode back).
void flush_subnormals();

}  // namespace tn
