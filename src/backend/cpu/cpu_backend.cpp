// The CPU backend: memory, worker threads and member blocks, the choice of the fused step
// kernel, data movement; the arithmetic ops go to the target's CpuOps table (ops/).
#include "backend/cpu/cpu_backend.h"

#include <cblas.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <thread>

#include "backend/cpu/lanes_mlp.h"

namespace tn {

namespace {

// The threads asked for (0: one per core this process may run on, its affinity as an MPI
// launcher or taskset binds it, or OMP_NUM_THREADS when set and fewer), at most one per
// hardware thread: more only add scheduling (--threads 1000000 started a million OpenMP threads).
int worker_threads(int requested) {
  const int hardware = std::max(1, omp_get_num_procs());  // the affinity mask's CPUs
  if (requested <= 0) {
    const char* env = std::getenv("OMP_NUM_THREADS");
    char* end = nullptr;
    const long n = env ? std::strtol(env, &end, 10) : 0;
    return n > 0 && end && *end == '\0' ? static_cast<int>(std::min<long>(n, hardware)) : hardware;
  }
  if (requested > hardware)
    spdlog::warn("threads: {} requested, but this machine has {} hardware threads; using {}", requested, hardware,
                 hardware);
  return std::min(requested, hardware);
}

}  // namespace

CpuBackend::CpuBackend(int threads, CpuTarget target)
    : threads_(worker_threads(threads)), target_(target), ops_(cpu_ops(target)) {
  // Parallelism comes from member blocks; OpenBLAS must not start threads of its own.
  openblas_set_num_threads(1);
  // Start the worker threads now rather than in the first for_each_block, which may be the
  // first epoch of a timed training loop.
#pragma omp parallel num_threads(threads_)
  {
  }
}

std::string CpuBackend::describe() const {
  return std::string("cpu: ") + to_string(target_) + " kernels (" + std::to_string(target_lanes(target_)) +
         " floats per vector), member blocks on " + std::to_string(threads_) +
         " OpenMP threads, GEMMs by own kernels below 64^3 multiply-adds and OpenBLAS above";
}

// Small models run fused with members in SIMD lanes; the rest member by member with
// per-member GEMMs. Which is faster was measured per kernel and target (train seconds of
// both on one machine, AMD EPYC Zen 4 with 1 MiB of L2 per core; docs/performance.md "Choosing the step
// kernel"): the one-hidden-layer kernel won on every shape up to 2 -> 2048 -> 2 (1.7 MiB of
// scratch on AVX2, 3.3 MiB on AVX-512; 2.7-3.7x), so it keeps a 4 MiB budget. The
// layer-by-layer kernel won up to 2 -> 128 -> 128 -> 2 on AVX-512 (0.91x at 2.6 MiB) and
// lost from 784 -> 16 -> 10 at batch 32 (1.26x at 3.2 MiB); on AVX2, with half the
// registers, it won up to 2 -> 64 -> 64 -> 2 (0.94x at 416 KiB) and lost from
// 2 -> 128 -> 128 -> 2 (1.28x at 1.3 MiB; Fashion-MNIST's 784 -> 64 -> 32 -> 10 at batch 8:
// 2.1x). Targets not measured (NEON, the portable one) take AVX2's budget.
constexpr std::int64_t kShallowScratchBudget = 4 << 20;
constexpr std::int64_t layer_scratch_budget(CpuTarget t) { return t == CpuTarget::Avx512 ? 3 << 20 : 1 << 20; }

std::vector<std::unique_ptr<StepKernel>> CpuBackend::step_kernels(const ModelShape& shape, int batch,
                                                                    std::string* why) {
  std::vector<std::unique_ptr<StepKernel>> kernels;
  const bool shallow = shape.recurrent.empty() && lane_kernel(target_).is_shallow(shape);
  const std::int64_t budget = shallow ? kShallowScratchBudget : layer_scratch_budget(target_);
  if (auto lanes = make_lane_step_kernel(target_, shape, batch, budget, why)) kernels.push_back(std::move(lanes));
  return kernels;
}

void* CpuBackend::alloc_bytes(std::size_t bytes) {
  const std::size_t rounded = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return p;
}
void CpuBackend::release(void* p) { std::free(p); }
// Zero bytes may come with null pointers (an empty tensor), which memcpy and friends must not
// be given even then (UBSan reports it; the C standard makes it undefined).
void CpuBackend::to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::fill_zero(void* dst, std::size_t bytes) {
  if (bytes) std::memset(dst, 0, bytes);
}
void CpuBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

// Enough blocks to keep every thread busy, few enough members that a block's activations
// stay in a core's L2 cache (≈ 256 KiB budget).
int CpuBackend::block_members(int S, std::int64_t bytes_per_member) const {
  const auto by_cache = static_cast<int>(std::max<std::int64_t>(1, (256 << 10) / std::max<std::int64_t>(1, bytes_per_member)));
  const int by_balance = std::max(1, (S + 4 * threads_ - 1) / (4 * threads_));
  return std::clamp(std::min(by_cache, by_balance), 1, 32);
}

namespace {

// The thread's flush-to-zero control: on x86 MXCSR's FTZ (bit 15, results) and DAZ (bit 6,
// inputs); on aarch64 FPCR's FZ (bit 24), which flushes both inputs and results.
#if defined(__SSE__)
constexpr unsigned kFlushBits = 0x8040u;
unsigned fp_control() { return _mm_getcsr(); }
void set_fp_control(unsigned v) { _mm_setcsr(v); }
#elif defined(__aarch64__)
constexpr std::uint64_t kFlushBits = 1u << 24;
std::uint64_t fp_control() {
  std::uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
void set_fp_control(std::uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v)); }
#else  // an architecture whose flush-to-zero control turbanet does not set: subnormals stay
constexpr unsigned kFlushBits = 0;
unsigned fp_control() { return 0; }
void set_fp_control(unsigned) {}
#endif

// Puts the calling thread's flush-to-zero bits back as they were when it is destroyed. The
// calling thread runs blocks too (it is thread 0 of the OpenMP team), and whatever it
// computes afterwards (parsing a config, formatting numbers) must see subnormals as they
// are: 1e-320 is a valid init_scale.
class CallerFpMode {
 public:
  CallerFpMode() : saved_(fp_control() & kFlushBits) {}
  ~CallerFpMode() { set_fp_control((fp_control() & ~kFlushBits) | saved_); }
  CallerFpMode(const CallerFpMode&) = delete;
  CallerFpMode& operator=(const CallerFpMode&) = delete;

 private:
  decltype(fp_control()) saved_;
};

}  // namespace

// Subnormal floats (below 1.2e-38) are flushed to zero on every worker thread: decaying
// recurrent states and saturated gates produce them, and each one costs ~100 cycles on x86.
// Every thread sets the same mode, so results stay independent of the thread count.
void flush_subnormals() { set_fp_control(fp_control() | kFlushBits); }

void CpuBackend::for_each_block(int S, int max_block, const std::function<void(int, int, int)>& fn) {
  CallerFpMode caller_mode;  // the workers keep flushing; the caller gets its mode back
  const int bs = std::max(1, max_block);
  const int blocks = (S + bs - 1) / bs;
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
  for (int blk = 0; blk < blocks; ++blk) {
    flush_subnormals();
    try {
      fn(blk * bs, std::min(S, (blk + 1) * bs), omp_get_thread_num());
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

void CpuBackend::gemm_strided_batched(Trans ta, Trans tb, int m, int n, int k, float alpha,
                                      const float* A, int lda, std::int64_t strideA,
                                      const float* B, int ldb, std::int64_t strideB, float beta,
                                      float* C, int ldc, std::int64_t strideC, int batch) {
  // Column-major C (m×n) = op(A)·op(B) is row-major Cᵀ (n×m) = op(B)ᵀ·op(A)ᵀ, and a
  // column-major matrix read row-major is its transpose: swap the operands.
  for (int p = 0; p < batch; ++p)
    ops_.gemm(tb, ta, n, m, k, alpha, B + p * strideB, ldb, A + p * strideA, lda, beta, C + p * strideC, ldc);
}

void CpuBackend::bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z,
                                 std::int64_t sZ, const float* b, std::int64_t sb, float* A,
                                 std::int64_t sA) {
  ops_.bias_activation(act, slope, S, rows, cols, Z, sZ, b, sb, A, sA);
}

void CpuBackend::activation_backward(Activation act, float slope, int S, int rows, int cols,
                                     const float* Z, const float* A, std::int64_t s, float* dA) {
  ops_.activation_backward(act, slope, S, rows, cols, Z, A, s, dA);
}

// Integer Philox and one multiply per element: the same bits on every SIMD target, so this
// op is compiled once rather than per target.
void CpuBackend::dropout(int S, int rows, int cols, const float* X, std::int64_t sX, float* Y, std::int64_t sY,
                         const DropoutKey& key) {
  const std::uint32_t epoch = *key.epoch;
  for (int s = 0; s < S; ++s)
    for (int r = 0; r < rows; ++r) {
      const Philox4x32 row = dropout_row_key(key.seed, dropout_member(key, static_cast<std::uint32_t>(s)), epoch, key.pos0 + r);
      const float* x = X + s * sX + static_cast<std::int64_t>(r) * cols;
      float* y = Y + s * sY + static_cast<std::int64_t>(r) * cols;
      for (int j0 = 0; j0 < cols; j0 += 4) {
        const Philox4x32 w = dropout_unit_words(row, key.layer, j0 / 4);
        for (int q = 0; q < 4 && j0 + q < cols; ++q) y[j0 + q] = x[j0 + q] * dropout_scale(w.v[q], key.rate);
      }
    }
}

void CpuBackend::bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db,
                           std::int64_t sb) {
  ops_.bias_grad(S, rows, cols, dZ, sZ, db, sb);
}

void CpuBackend::loss_backward(const LossConfig& loss, int S, int B, int O, const float* Z,
                               std::int64_t sZ, const float* Y, std::int64_t sY, float* dZ,
                               double* loss_sum, double* correct, const int* rows) {
  ops_.loss(loss, S, B, O, Z, sZ, Y, sY, dZ, loss_sum, correct, rows);
}

void CpuBackend::loss_forward(const LossConfig& loss, int S, int B, int O, const float* Z,
                              std::int64_t sZ, const float* Y, std::int64_t sY, double* loss_sum,
                              double* correct, const int* rows) {
  ops_.loss(loss, S, B, O, Z, sZ, Y, sY, nullptr, loss_sum, correct, rows);
}

void CpuBackend::output_transform(LossType loss, int S, int B, int O, const float* Z,
                                  std::int64_t sZ, float* P, std::int64_t sP) {
  ops_.output_transform(loss, S, B, O, Z, sZ, P, sP);
}

void CpuBackend::sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2) {
  ops_.sum_squares(S, n, x, sx, norm2);
}

void CpuBackend::freeze_diverged(int S, const double* loss_sum, int* frozen, OptStep* opt) {
  for (int s = 0; s < S; ++s)
    if (frozen_member(loss_sum[s], frozen[s])) opt[s].skip = true;
}

void CpuBackend::optimizer_update(OptimizerType type, int S, std::int64_t n, float* P,
                                  const float* G, float* S1, float* S2, std::int64_t stride,
                                  const OptStep* h, float clip, const double* norm2) {
  ops_.optimizer_update(type, S, n, P, G, S1, S2, stride, h, clip, norm2);
}

void CpuBackend::lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c,
                              float* h, std::int64_t sC) {
  ops_.lstm_forward(S, B, H, G, sG, c_prev, c, h, sC);
}

void CpuBackend::lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev,
                               const float* c, const float* dh, std::int64_t sC, float* dc, std::int64_t sdc,
                               float* dG) {
  ops_.lstm_backward(S, B, H, G, sG, c_prev, c, dh, sC, dc, sdc, dG);
}

void CpuBackend::gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh,
                             std::int64_t sb, const float* h_prev, float* h, std::int64_t sH) {
  ops_.gru_forward(S, B, H, Gx, Gh, sG, bh, sb, h_prev, h, sH);
}

void CpuBackend::gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG,
                              const float* h_prev, const float* dh, std::int64_t sH, float* dGx, float* dGh,
                              float* dh_prev) {
  ops_.gru_backward(S, B, H, Gx, Gh, sG, h_prev, dh, sH, dGx, dGh, dh_prev);
}

// Data movement: the same on every target.
void CpuBackend::gather_batch(const BatchSampler& sampler, std::uint32_t member0, int S,
                              std::uint32_t pos0, int B, const float* X, int F, const float* Y,
                              int T, float* Xb, std::int64_t sXb, float* Yb, std::int64_t sYb,
                              const float* Ystats) {
  for (int s = 0; s < S; ++s) {
    const float* mean = Ystats ? Ystats + static_cast<std::int64_t>(2 * s) * T : nullptr;
    for (int b = 0; b < B; ++b) {
      const std::int64_t i = sampler.index(member0 + s, pos0 + b);
      const float* x = X + i * F;
      const float* y = Y + i * T;
      float* xb = Xb + s * sXb + static_cast<std::int64_t>(b) * F;
      float* yb = Yb + s * sYb + static_cast<std::int64_t>(b) * T;
      for (int f = 0; f < F; ++f) xb[f] = x[f];  // rows are short: a loop beats memmove calls
      if (mean)
        for (int t = 0; t < T; ++t) yb[t] = (y[t] - mean[t]) / mean[T + t];
      else
        for (int t = 0; t < T; ++t) yb[t] = y[t];
    }
  }
}

void CpuBackend::to_time_major(int S, int B, int T, int F, const float* src, std::int64_t ss, float* dst,
                               std::int64_t sd) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      const float* __restrict in = src + s * ss + static_cast<std::int64_t>(b) * T * F;
      float* __restrict out = dst + s * sd + static_cast<std::int64_t>(b) * F;
      if (F == 1) {  // one feature per step (price series) and transposes: no per-element copy calls
        for (int t = 0; t < T; ++t) out[static_cast<std::int64_t>(t) * B] = in[t];
        continue;
      }
      for (int t = 0; t < T; ++t)
        std::copy_n(in + static_cast<std::int64_t>(t) * F, F, out + static_cast<std::int64_t>(t) * B * F);
    }
}

}  // namespace tn
