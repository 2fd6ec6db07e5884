// CPU backend ops: plain loops over members, templated on the activation, loss and
// optimizer so the inner loops carry no branches on configuration.
#include "backend/cpu/cpu_backend.h"

#include <cblas.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <thread>

#include "backend/cpu/lanes_mlp.h"
#include "math/activations.h"
#include "math/losses.h"

namespace tn {

namespace {

// The threads asked for (0: one per hardware thread), at most one per hardware thread: more
// only add scheduling (--threads 1000000 started a million OpenMP threads).
int worker_threads(int requested) {
  const int hardware = std::max(1, omp_get_num_procs());
  if (requested <= 0) return hardware;
  if (requested > hardware)
    spdlog::warn("threads: {} requested, but this machine has {} hardware threads; using {}", requested, hardware,
                 hardware);
  return std::min(requested, hardware);
}

}  // namespace

CpuBackend::CpuBackend(int threads, CpuTarget target) : threads_(worker_threads(threads)), target_(target) {
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
// per-member GEMMs. The lane kernel wins while a lane group's scratch stays within a few
// MiB (L2 plus part of L3); wider models are GEMM-bound and better served by OpenBLAS.
constexpr std::int64_t kLaneScratchBudget = 4 << 20;

std::vector<std::unique_ptr<StepKernel>> CpuBackend::step_kernels(const ModelShape& shape, int batch,
                                                                    std::string* why) {
  std::vector<std::unique_ptr<StepKernel>> kernels;
  if (auto lanes = make_lane_step_kernel(target_, shape, batch, kLaneScratchBudget, why)) kernels.push_back(std::move(lanes));
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

// Subnormal floats (below 1.2e-38) are flushed to zero on every worker thread: decaying
// recurrent states and saturated gates produce them, and each one costs ~100 cycles on x86.
// Every thread sets the same mode, so results stay independent of the thread count.
void flush_subnormals() {
#if defined(__SSE__)
  _mm_setcsr(_mm_getcsr() | 0x8040u);  // FTZ (bit 15) and DAZ (bit 6)
#endif
}

namespace {

// Puts the calling thread's flush-to-zero and denormals-are-zero bits back as they were when
// it is destroyed. The calling thread runs blocks too (it is thread 0 of the OpenMP team),
// and whatever it computes afterwards (parsing a config, formatting numbers) must see
// subnormals as they are: 1e-320 is a valid init_scale.
class CallerFpMode {
 public:
#if defined(__SSE__)
  CallerFpMode() : saved_(_mm_getcsr() & kBits) {}
  ~CallerFpMode() { _mm_setcsr((_mm_getcsr() & ~kBits) | saved_); }
#endif
  CallerFpMode(const CallerFpMode&) = delete;
  CallerFpMode& operator=(const CallerFpMode&) = delete;

 private:
#if defined(__SSE__)
  static constexpr unsigned kBits = 0x8040;  // FTZ (bit 15) and DAZ (bit 6)
  unsigned saved_;
#endif
};

}  // namespace

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

void CpuBackend::bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z,
                                 std::int64_t sZ, const float* b, std::int64_t sb, float* A,
                                 std::int64_t sA) {
  dispatch_activation(act, [&]<Activation F>() {
    for (int s = 0; s < S; ++s) {
      const float* __restrict bias = b + s * sb;
      for (int r = 0; r < rows; ++r) {
        float* __restrict z = Z + s * sZ + static_cast<std::int64_t>(r) * cols;
        for (int c = 0; c < cols; ++c) z[c] += bias[c];
        if constexpr (F != Activation::Identity) {
          float* __restrict a = A + s * sA + static_cast<std::int64_t>(r) * cols;
          for (int c = 0; c < cols; ++c) a[c] = act_forward<F>(z[c], slope);
        } else if (A != Z) {
          std::copy(z, z + cols, A + s * sA + static_cast<std::int64_t>(r) * cols);
        }
      }
    }
  });
}

void CpuBackend::activation_backward(Activation act, float slope, int S, int rows, int cols,
                                     const float* Z, const float* A, std::int64_t s, float* dA) {
  if (act == Activation::Identity) return;
  dispatch_activation(act, [&]<Activation F>() {
    const std::int64_t n = static_cast<std::int64_t>(rows) * cols;
    for (int m = 0; m < S; ++m) {
      const float* __restrict z = Z + m * s;
      const float* __restrict a = A + m * s;
      float* __restrict d = dA + m * s;
      for (std::int64_t i = 0; i < n; ++i) d[i] *= act_derivative<F>(z[i], a[i], slope);
    }
  });
}

void CpuBackend::bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db,
                           std::int64_t sb) {
  // Column sums in strips of 64 columns held in a local accumulator (no aliasing with dZ, so
  // the compiler keeps it in registers for narrow layers).
  constexpr int kStrip = 64;
  for (int s = 0; s < S; ++s) {
    for (int c0 = 0; c0 < cols; c0 += kStrip) {
      const int w = std::min(kStrip, cols - c0);
      float acc[kStrip] = {};
      for (int r = 0; r < rows; ++r) {
        const float* d = dZ + s * sZ + static_cast<std::int64_t>(r) * cols + c0;
        for (int c = 0; c < w; ++c) acc[c] += d[c];
      }
      std::copy(acc, acc + w, db + s * sb + c0);
    }
  }
}

namespace {

template <bool G>
void loss_impl(const LossConfig& cfg, int S, int B, int O, const float* Z, std::int64_t sZ,
               const float* Y, std::int64_t sY, float* dZ, double* loss_sum, double* correct,
               const int* rows) {
  const int T = cfg.type == LossType::CrossEntropy ? 1 : O;
  thread_local std::vector<float> scratch;  // softmax outputs when no gradient is wanted
  scratch.resize(O);
  dispatch_loss(cfg.type, [&]<LossType L>() {
    for (int s = 0; s < S; ++s) {
      const int valid = rows ? rows[s] : B;
      if constexpr (G)  // masked rows contribute no gradient
        std::fill(dZ + s * sZ + static_cast<std::int64_t>(valid) * O, dZ + s * sZ + static_cast<std::int64_t>(B) * O, 0.0f);
      const float inv_b = 1.0f / static_cast<float>(valid > 0 ? valid : 1);
      double sum = 0.0;
      for (int b = 0; b < valid; ++b) {
        const std::int64_t z_off = s * sZ + static_cast<std::int64_t>(b) * O;
        float* g = G ? dZ + z_off : scratch.data();
        sum += sample_loss<L, G>(cfg.huber_delta, O, Z + z_off, Y + s * sY + static_cast<std::int64_t>(b) * T, g, &correct[s]);
        if constexpr (G)
          for (int j = 0; j < O; ++j) g[j] *= inv_b;
      }
      loss_sum[s] += sum;
    }
  });
}

}  // namespace

void CpuBackend::loss_backward(const LossConfig& loss, int S, int B, int O, const float* Z,
                               std::int64_t sZ, const float* Y, std::int64_t sY, float* dZ,
                               double* loss_sum, double* correct, const int* rows) {
  loss_impl<true>(loss, S, B, O, Z, sZ, Y, sY, dZ, loss_sum, correct, rows);
}

void CpuBackend::loss_forward(const LossConfig& loss, int S, int B, int O, const float* Z,
                              std::int64_t sZ, const float* Y, std::int64_t sY, double* loss_sum,
                              double* correct, const int* rows) {
  loss_impl<false>(loss, S, B, O, Z, sZ, Y, sY, nullptr, loss_sum, correct, rows);
}

void CpuBackend::output_transform(LossType loss, int S, int B, int O, const float* Z,
                                  std::int64_t sZ, float* P, std::int64_t sP) {
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(S) * B; ++r) {
    const float* z = Z + (r / B) * sZ + (r % B) * O;
    float* p = P + (r / B) * sP + (r % B) * O;
    if (loss == LossType::CrossEntropy) {
      const float mx = *std::max_element(z, z + O);
      float sum = 0.0f;
      for (int j = 0; j < O; ++j) sum += p[j] = std::exp(z[j] - mx);
      for (int j = 0; j < O; ++j) p[j] /= sum;
    } else if (loss == LossType::Bce) {
      for (int j = 0; j < O; ++j) p[j] = sigmoid(z[j]);
    } else {
      std::copy(z, z + O, p);
    }
  }
}

void CpuBackend::gather_batch(const BatchSampler& sampler, std::uint32_t member0, int S,
                              std::uint32_t pos0, int B, const float* X, int F, const float* Y,
                              int T, float* Xb, std::int64_t sXb, float* Yb, std::int64_t sYb) {
  for (int s = 0; s < S; ++s) {
    for (int b = 0; b < B; ++b) {
      const std::int64_t i = sampler.index(member0 + s, pos0 + b);
      const float* x = X + i * F;
      const float* y = Y + i * T;
      float* xb = Xb + s * sXb + static_cast<std::int64_t>(b) * F;
      float* yb = Yb + s * sYb + static_cast<std::int64_t>(b) * T;
      for (int f = 0; f < F; ++f) xb[f] = x[f];  // rows are short: a loop beats memmove calls
      for (int t = 0; t < T; ++t) yb[t] = y[t];
    }
  }
}

void CpuBackend::sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2) {
  for (int s = 0; s < S; ++s) {
    const float* v = x + s * sx;
    double acc = 0.0;
    for (std::int64_t i = 0; i < n; ++i) acc += static_cast<double>(v[i]) * v[i];
    norm2[s] += acc;
  }
}

void CpuBackend::optimizer_update(OptimizerType type, int S, std::int64_t n, float* P,
                                  const float* G, float* S1, float* S2, std::int64_t stride,
                                  const OptStep* h, float clip, const double* norm2) {
  dispatch_optimizer(type, [&]<OptimizerType O>() {
    for (int s = 0; s < S; ++s) {
      const std::int64_t off = s * stride;
      const OptStep step = h[s];
      if (step.skip) continue;
      float* __restrict p = P + off;
      const float* __restrict g = G + off;
      float* __restrict s1 = S1 + off;
      float* __restrict s2 = S2 + off;
      const float k = clip > 0.0f ? clip_scale(clip, norm2[s]) : 1.0f;
      if (k != 1.0f) {
        for (std::int64_t i = 0; i < n; ++i) update_param<O>(p[i], g[i] * k, s1[i], s2[i], step);
      } else {
        for (std::int64_t i = 0; i < n; ++i) update_param<O>(p[i], g[i], s1[i], s2[i], step);
      }
    }
  });
}

}  // namespace tn
