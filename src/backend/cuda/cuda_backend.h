// The CUDA backend: the same ops as the CPU backend on one GPU. GEMMs run through
// cublasSgemmStridedBatched with the interface's exact arguments; every other op is one
// grid-stride kernel around a functor that calls the shared TN_HD math (math/, sampler.h).
// Everything runs in order on one stream; to_host synchronizes.
#pragma once
#include <cstdint>

#include "backend/backend.h"
#include "backend/devices.h"

namespace tn {

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, bool tf32);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda:" + std::to_string(device_); }
  std::string describe() const override;
  int workers() const override { return 1; }

  void* alloc_bytes(std::size_t bytes) override;
  void release(void* p) override;
  void to_device(void* dst, const void* src, std::size_t bytes) override;
  void to_host(void* dst, const void* src, std::size_t bytes) override;
  void for_each_block(int S, int max_block, const std::function<void(int, int, int)>& fn) override;

  void gemm_strided_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* A,
                            int lda, std::int64_t strideA, const float* B, int ldb,
                            std::int64_t strideB, float beta, float* C, int ldc,
                            std::int64_t strideC, int batch) override;
  void bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z,
                       std::int64_t sZ, const float* b, std::int64_t sb, float* A,
                       std::int64_t sA) override;
  void activation_backward(Activation act, float slope, int S, int rows, int cols, const float* Z,
                           const float* A, std::int64_t s, float* dA) override;
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
                    int B, const float* X, int F, const float* Y, int T, float* Xb,
                    std::int64_t sXb, float* Yb, std::int64_t sYb) override;
  void sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2) override;
  void optimizer_update(OptimizerType type, int S, std::int64_t n, float* P, const float* G,
                        float* S1, float* S2, std::int64_t stride, const OptStep* h,
                        float clip, const double* norm2) override;

  const GpuInfo& info() const { return info_; }

 private:
  // Device scratch of at least `bytes` (grow-only; reused by every op on the stream).
  void* scratch(std::size_t bytes);
  template <bool G>
  void loss_impl(const LossConfig& cfg, int S, int B, int O, const float* Z, std::int64_t sZ,
                 const float* Y, std::int64_t sY, float* dZ, double* loss_sum, double* correct,
                 const int* rows);

  int device_ = 0;
  bool tf32_ = false;
  GpuInfo info_;
  void* stream_ = nullptr;  // cudaStream_t
  void* cublas_ = nullptr;  // cublasHandle_t
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
};

}  // namespace tn
