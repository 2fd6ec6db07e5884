// The CUDA backend: the same ops as the CPU backend on one GPU. GEMMs run through
// cublasSgemmStridedBatched with the interface's exact arguments; every other op is one
// grid-stride kernel around a functor that calls the shared TN_HD math (math/, sampler.h).
// Everything runs in order on one stream; to_host synchronizes. Recorded op sequences
// (run_recorded: a block's epoch) are captured once into a CUDA graph and replayed.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "backend/device_choice.h"

namespace tn {

// The GPUs the CUDA runtime sees (what list_gpus returns once the driver reports a device).
std::vector<GpuInfo> cuda_runtime_gpus(std::string* why);

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
  void fill_zero(void* dst, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  std::uint64_t memory_budget() const override;
  int block_members(int S, std::int64_t bytes_per_member) const override { return S; }
  void run_recorded(std::uint64_t key, const std::function<void()>& ops) override;
  bool replays_recordings() const override { return true; }
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

  const GpuInfo& info() const { return info_; }
  // Graph replays so far and recordings held (for tests and logs).
  long graph_launches() const { return graph_launches_; }
  std::size_t recordings() const { return recorded_.size(); }

 private:
  // Device scratch of at least `bytes` (grow-only; reused by every op on the stream).
  void* scratch(std::size_t bytes);
  // Drops every recorded graph (memory they point into is going away) and frees the retired
  // scratch buffers only they could still use.
  void drop_recordings();
  // Throws when called while a sequence is being captured (allocation, host copies, sync).
  void not_capturing(const char* what) const;
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
  std::vector<void*> retired_scratch_;  // outgrown scratch buffers that recordings may still use
  void* cublas_workspace_ = nullptr;
  struct Recording {
    int runs = 0;           // eager runs before capture (the first sizes scratch buffers)
    void* exec = nullptr;   // cudaGraphExec_t
  };
  std::unordered_map<std::uint64_t, Recording> recorded_;
  bool capturing_ = false;
  long graph_launches_ = 0;
};

}  // namespace tn
