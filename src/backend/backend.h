// The compute interface the trainer is written against. A backend owns memory and runs
// ops over a *block* of swarm members; every tensor carries the member axis first
// ([S, ...], member stride given explicitly). The CPU backend is the reference; a CUDA
// backend implements the same ops with cuBLAS and the shared host/device headers in math/.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/device_choice.h"
#include "backend/step_kernel.h"
#include "math/dropout.h"
#include "math/losses.h"
#include "math/optimizers.h"
#include "swarm/sampler.h"
#include "swarm/shape.h"
#include "util/user_error.h"

namespace tn {

enum class Trans { N, T };
class StepKernel;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;     // "cpu", "cuda:0"
  virtual std::string describe() const = 0; // how ops run, for logs and run files
  virtual int workers() const = 0;          // blocks that may run at once

  // ---- memory (device memory; the CPU backend's is host memory) ----
  virtual void* alloc_bytes(std::size_t bytes) = 0;  // zero-filled, 64-byte aligned
  virtual void release(void* p) = 0;
  virtual void to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void to_host(void* dst, const void* src, std::size_t bytes) = 0;
  template <class T>
  T* alloc(std::size_t count) { return static_cast<T*>(alloc_bytes(count * sizeof(T))); }
  // Device-side fill and copy, ordered with the ops (no host synchronization).
  virtual void fill_zero(void* dst, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // True when device memory is host memory: read-only host data (the training set) can then
  // be passed to ops in place instead of copied.
  virtual bool host_memory() const { return false; }
  // Bytes of device memory a run may plan with, or 0 when memory is host memory and not
  // planned (the CPU backend).
  virtual std::uint64_t memory_budget() const { return 0; }

  // Members per block for a swarm of S with `bytes_per_member` of activations: the CPU
  // keeps a block in a core's cache; a GPU takes the whole swarm (or chunk) at once.
  virtual int block_members(int S, std::int64_t bytes_per_member) const = 0;

  // Runs `ops`, a sequence of op calls that issues the same ops with the same arguments every
  // time it is run under `key` (everything that varies lives in device buffers, written
  // before the call). A backend may record the sequence and replay the recording (CUDA
  // graphs) instead of issuing the ops again; the CPU backend simply runs it. `ops` must not
  // copy to or from the host, allocate or release. Recordings are dropped whenever device
  // memory is released (a recording may point into it).
  virtual void run_recorded(std::uint64_t key, const std::function<void()>& ops) { ops(); }
  // True when run_recorded may replay a recording: `ops` must then issue the whole sequence
  // every time (a sequence cut short, say by an interruption, would be recorded as such).
  virtual bool replays_recordings() const { return false; }

  // Runs fn(begin, end, worker) over blocks of members covering [0, S), at most
  // `max_block` members each. Blocks may run concurrently on distinct workers
  // (0 <= worker < workers()); fn must only touch its own members and its worker's
  // scratch. Returns when all blocks are done.
  virtual void for_each_block(int S, int max_block,
                              const std::function<void(int, int, int)>& fn) = 0;

  // ---- GEMM: exactly cublasSgemmStridedBatched's contract (column-major) ----
  // For each p in [0, batch):
  //   C_p = alpha · op(A_p) · op(B_p) + beta · C_p
  // with A_p = A + p·strideA, etc.; op(X) = X (N) or Xᵀ (T). All matrices are
  // column-major: element (r, c) of a matrix with leading dimension ld is at [r + c·ld].
  // op(A) is m×k, op(B) is k×n, C is m×n. A is m×k (lda ≥ m) when N, k×m (lda ≥ k) when
  // T; likewise B; ldc ≥ m. beta = 0 means C is not read (NaN in C does not propagate).
  // Row-major callers use gemm_rm() below.
  virtual void gemm_strided_batched(Trans ta, Trans tb, int m, int n, int k, float alpha,
                                    const float* A, int lda, std::int64_t strideA,
                                    const float* B, int ldb, std::int64_t strideB, float beta,
                                    float* C, int ldc, std::int64_t strideC, int batch) = 0;

  // ---- fused step kernels ----
  // The fused kernels this backend has for `shape` with batches of up to `batch` rows, best
  // first (backend/step_kernel.h). Decided by shape only, never by swarm size. Empty when it
  // has none for the shape; *why (when given) then says why, for the log. The trainer runs
  // the separate ops below instead (model/step_kernel_choice.h).
  virtual std::vector<std::unique_ptr<StepKernel>> step_kernels(const ModelShape& shape, int batch,
                                                                std::string* why) {
    if (why) *why = name() + " has no fused step kernel";
    return {};
  }

  // ---- elementwise and reductions over a block of S members ----
  // Z [S, rows, cols] (member stride sZ) += b [S, cols] (stride sb); A = act(Z) (stride sA).
  // A may be Z itself only for the identity activation.
  virtual void bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z,
                               std::int64_t sZ, const float* b, std::int64_t sb, float* A,
                               std::int64_t sA) = 0;
  // dA [S, rows, cols] *= act'(Z) in place (turning dL/dA into dL/dZ).
  virtual void activation_backward(Activation act, float slope, int S, int rows, int cols,
                                   const float* Z, const float* A, std::int64_t s, float* dA) = 0;
  // Inverted dropout (math/dropout.h): Y [S, rows, cols] (stride sY) = X (stride sX) times
  // member s's factor of each element, 0 or 1 / (1 − key.rate), for rows at epoch positions
  // key.pos0 + r of member key.member0 + s. Y may be X (in place: the backward pass applies
  // the same factors to the gradient).
  virtual void dropout(int S, int rows, int cols, const float* X, std::int64_t sX, float* Y, std::int64_t sY,
                       const DropoutKey& key) = 0;
  // db [S, cols] = sum over rows of dZ [S, rows, cols].
  virtual void bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db,
                         std::int64_t sb) = 0;
  // Per-member scalars (loss_sum, correct, norm2, opt) are device arrays like any tensor.
  // Loss of outputs Z [S, B, O] (member stride sZ) against targets Y [S, B, Ty] (stride sY;
  // Ty = 1 class labels for cross_entropy, else Ty = O values). Writes dZ (stride sZ) = dL/dZ
  // with L the per-member mean over the batch (and outputs, for regression), and *adds*
  // per-member sums over samples to loss_sum[S] and correct[S] (correct: argmax == label for
  // cross_entropy; for bce the fraction of outputs with (z > 0) == (y > 0.5)).
  // rows (null: all B) gives member s's valid rows rows[s] ≤ B: the mean is over those, the
  // rest get dZ = 0 and add nothing (members with fewer samples than the batch).
  virtual void loss_backward(const LossConfig& loss, int S, int B, int O, const float* Z,
                             std::int64_t sZ, const float* Y, std::int64_t sY, float* dZ,
                             double* loss_sum, double* correct, const int* rows) = 0;
  // The same loss without gradients (validation), adding to loss_sum and correct.
  virtual void loss_forward(const LossConfig& loss, int S, int B, int O, const float* Z,
                            std::int64_t sZ, const float* Y, std::int64_t sY, double* loss_sum,
                            double* correct, const int* rows) = 0;
  // P [S, B, O] (stride sP) = what users see: softmax (cross_entropy), sigmoid (bce), or Z.
  virtual void output_transform(LossType loss, int S, int B, int O, const float* Z,
                                std::int64_t sZ, float* P, std::int64_t sP) = 0;
  // Xb [S, B, F] (stride sXb) and Yb [S, B, Ty] (stride sYb): member s's rows at positions
  // pos0..pos0+B of its sample order, gathered from X [n, F] and Y [n, Ty] (Ty: values per
  // target row). With Ystats [S, 2, Ty] (the gathered members' target statistics: member s's
  // means at Ystats[2·s·Ty], its stds at Ystats[(2·s + 1)·Ty]), each member's targets are scaled
  // as it gathers them, Yb = (Y − mean) / std in float (data/member_sets.h, per-member target
  // statistics); null: Yb = Y.
  virtual void gather_batch(const BatchSampler& sampler, std::uint32_t member0, int S,
                            std::uint32_t pos0, int B, const float* X, int F, const float* Y,
                            int Ty, float* Xb, std::int64_t sXb, float* Yb, std::int64_t sYb,
                            const float* Ystats = nullptr) = 0;
  // ---- recurrent layers (equations in math/recurrent_cells.h; T is time steps, h hidden states) ----
  // Time-major copy of sequence inputs: dst [S, T, B, F] (stride sd) from src [S, B, T, F]
  // (stride ss).
  virtual void to_time_major(int S, int B, int T, int F, const float* src, std::int64_t ss, float* dst,
                             std::int64_t sd) = 0;
  // One LSTM step of B rows: G [S, B, 4H] (stride sG) pre-activations in, activated gates
  // out; c_prev (null: zero state), c and h are [S, B, H] with stride sC.
  virtual void lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c,
                            float* h, std::int64_t sC) = 0;
  // Its backward: dG [S, B, 4H] (stride sG) from the gates G, c_prev (null: zero), c
  // (stride sC), dh = dL/dh_t (stride sC) and dc [S, B, H] (stride sdc; dL/dc_t in,
  // dL/dc_{t−1} out).
  virtual void lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev,
                             const float* c, const float* dh, std::int64_t sC, float* dc, std::int64_t sdc,
                             float* dG) = 0;
  // One GRU step: Gx [S, B, 3H] (stride sG) = x·Wx + bx in, gates r, z, n out; Gh (same
  // stride) = h_{t−1}·Wh in (not read when h_prev is null: the first step), h_{t−1}·Wh_n + bh_n
  // out in its n block; bh [S, 3H] (stride sb); h_prev (null: zero) and h [S, B, H] stride sH.
  virtual void gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh,
                           std::int64_t sb, const float* h_prev, float* h, std::int64_t sH) = 0;
  // Its backward: dGx, dGh [S, B, 3H] (stride sG) from Gx (gates), Gh (n block), h_prev (null:
  // zero) and dh (stride sH); adds z ⊙ dh to dh_prev (stride sH) unless null.
  virtual void gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG,
                            const float* h_prev, const float* dh, std::int64_t sH, float* dGx, float* dGh,
                            float* dh_prev) = 0;
  // norm2[s] += Σ x², x [S, n] with member stride sx.
  virtual void sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx,
                           double* norm2) = 0;
  // One optimizer step on parameters P [S, n] (member stride `stride`) with gradients G and
  // state S1, S2 of the same layout, using member s's step scalars opt[s]. When clip > 0 the
  // gradient of member s is first scaled by min(1, clip / (√norm2[s] + 1e-6)), where
  // norm2[s] is the squared global norm of all its gradients (PyTorch's clip_grad_norm_).
  // Members with opt[s].skip are left unchanged.
  virtual void optimizer_update(OptimizerType type, int S, std::int64_t n, float* P,
                                const float* G, float* S1, float* S2, std::int64_t stride,
                                const OptStep* opt, float clip, const double* norm2) = 0;
  // Divergence isolation before a step's updates (math/optimizers.h frozen_member): member s
  // whose loss_sum[s] is not finite, or that frozen[s] marks, gets opt[s].skip and frozen[s] = 1.
  virtual void freeze_diverged(int S, const double* loss_sum, int* frozen, OptStep* opt) = 0;
};

// A device array of `count` T (at least one, so the pointer is always valid), released when
// it goes out of scope.
template <class T>
struct DeviceBuffer {
  Backend& be;
  T* p;
  DeviceBuffer(Backend& b, std::size_t count) : be(b), p(b.alloc<T>(count > 0 ? count : 1)) {}
  ~DeviceBuffer() { be.release(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Row-major GEMM through the column-major contract: for each p,
// C_p [M×N] = alpha · op(A_p) · op(B_p) + beta · C_p, row-major with leading dimensions
// lda/ldb/ldc (op(A) is M×K, op(B) is K×N). Uses (AB)ᵀ = BᵀAᵀ: a row-major matrix is its
// column-major transpose, so the call swaps the operands.
inline void gemm_rm(Backend& be, Trans ta, Trans tb, int M, int N, int K, float alpha,
                    const float* A, int lda, std::int64_t sA, const float* B, int ldb,
                    std::int64_t sB, float beta, float* C, int ldc, std::int64_t sC, int batch) {
  be.gemm_strided_batched(tb, ta, N, M, K, alpha, B, ldb, sB, A, lda, sA, beta, C, ldc, sC, batch);
}

struct BackendOptions {
  DeviceKind device = DeviceKind::Auto;
  int threads = 0;         // 0 = the cores this process may use (OMP_NUM_THREADS caps them)
  int device_index = -1;   // GPU ordinal named (cuda:N), or -1: see process_slot
  bool tf32 = false;       // CUDA: allow TF32 tensor-core GEMMs (device_precision: tf32)
  int process_slot = 0;    // this process among those sharing the machine (MPI local rank):
                           // with no ordinal named it takes GPU process_slot mod the GPUs
};

// Picks and creates the backend. Throws BackendError when the request cannot be met.
struct BackendError : UserError {
  using UserError::UserError;
};
std::unique_ptr<Backend> make_backend(const BackendOptions& opt, std::string* log_note);

}  // namespace tn
