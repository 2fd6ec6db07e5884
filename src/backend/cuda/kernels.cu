// CUDA backend ops: one generic grid-stride launcher around small functors. Each functor
// does for one work item what the CPU backend's loop body does, through the same TN_HD
// math (activations, losses, optimizers, sampler), so the two backends share formulas.
#include <cstdint>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/grid_stride.cuh"
#include "math/activations.h"
#include "math/dropout.h"
#include "math/losses.h"

namespace tn {
namespace {

using i64 = std::int64_t;

// ---- functors: one work item each ----

template <Activation A>
struct BiasAct {  // item = (member, row, col)
  int rows, cols;
  float slope;
  float* Z; i64 sZ; const float* b; i64 sb; float* Aout; i64 sA;
  __device__ void operator()(i64 i) const {
    const i64 per = static_cast<i64>(rows) * cols;
    const i64 s = i / per, rc = i % per;
    const int c = static_cast<int>(rc % cols);
    const float z = Z[s * sZ + rc] + b[s * sb + c];
    Z[s * sZ + rc] = z;
    if constexpr (A != Activation::Identity) Aout[s * sA + rc] = act_forward<A>(z, slope);
    else if (Aout != Z) Aout[s * sA + rc] = z;
  }
};

template <Activation A>
struct ActBack {  // item = (member, element)
  i64 n, s;
  float slope;
  const float* Z; const float* Aval; float* dA;
  __device__ void operator()(i64 i) const {
    const i64 o = (i / n) * s + i % n;
    dA[o] *= act_derivative<A>(Z[o], Aval[o], slope);
  }
};

struct Dropout {  // item = (member, row, group of 4 columns): one Philox call each
  int rows, cols, groups;
  const float* X; i64 sX; float* Y; i64 sY;
  DropoutKey key;
  __device__ void operator()(i64 i) const {
    const i64 per = static_cast<i64>(rows) * groups;
    const i64 s = i / per;
    const int r = static_cast<int>((i % per) / groups), j0 = static_cast<int>(i % groups) * 4;
    const Philox4x32 row = dropout_row_key(key.seed, dropout_member(key, static_cast<std::uint32_t>(s)), *key.epoch,
                                           key.pos0 + static_cast<std::uint32_t>(r));
    const Philox4x32 w = dropout_unit_words(row, key.layer, j0 / 4);
    const i64 xo = s * sX + static_cast<i64>(r) * cols, yo = s * sY + static_cast<i64>(r) * cols;
    for (int q = 0; q < 4 && j0 + q < cols; ++q) Y[yo + j0 + q] = X[xo + j0 + q] * dropout_scale(w.v[q], key.rate);
  }
};

struct BiasGrad {  // item = (member, col); rows summed in order, as on the CPU
  int rows, cols;
  const float* dZ; i64 sZ; float* db; i64 sb;
  __device__ void operator()(i64 i) const {
    const i64 s = i / cols;
    const int c = static_cast<int>(i % cols);
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r) acc += dZ[s * sZ + static_cast<i64>(r) * cols + c];
    db[s * sb + c] = acc;
  }
};

struct WeightSums {  // item = member: the sum of its valid rows' class weights
  int B;
  const float* w; const float* Y; i64 sY; const int* rows;
  float* wsum;  // [S]
  __device__ void operator()(i64 s) const { wsum[s] = xent_weight_sum(w, Y + s * sY, rows ? rows[s] : B); }
};

template <LossType L, bool G>
struct SampleLoss {  // item = (member, row): per-sample loss/correct into scratch
  int B, O, T;
  float delta;
  const float* cw; const float* pw; const float* wsum;  // class weights, pos_weight, [S] weight sums
  const float* Z; i64 sZ; const float* Y; i64 sY;
  float* dZ;         // G: the gradient; else per-sample scratch [S·B·O] for softmax
  double* lbuf; double* cbuf;  // [S·B]
  const int* rows;
  __device__ void operator()(i64 i) const {
    const i64 s = i / B;
    const int b = static_cast<int>(i % B);
    const int valid = rows ? rows[s] : B;
    lbuf[i] = 0.0;
    cbuf[i] = 0.0;
    const i64 zo = s * sZ + static_cast<i64>(b) * O;
    float* g = G ? dZ + zo : dZ + i * O;
    if (b >= valid) {  // masked rows contribute no gradient
      if constexpr (G)
        for (int j = 0; j < O; ++j) g[j] = 0.0f;
      return;
    }
    double corr = 0.0;
    const float* y = Y + s * sY + static_cast<i64>(b) * T;
    const float l = sample_loss<L, G>(delta, pw, O, Z + zo, y, g, &corr);
    float gscale = 1.0f / static_cast<float>(valid > 0 ? valid : 1), lscale = 1.0f;
    if (cw) xent_weight_scales(cw[static_cast<int>(y[0])], wsum[s], valid, &gscale, &lscale);
    lbuf[i] = cw ? l * lscale : l;
    cbuf[i] = corr;
    if constexpr (G)
      for (int j = 0; j < O; ++j) g[j] *= gscale;
  }
};

struct MemberSums {  // item = member: adds its samples' losses and corrects in row order
  int B;
  const double* lbuf; const double* cbuf; const int* rows;
  double* loss_sum; double* correct;
  __device__ void operator()(i64 s) const {
    const int valid = rows ? rows[s] : B;
    double sum = 0.0, c = correct[s];
    for (int b = 0; b < valid; ++b) {
      sum += lbuf[s * B + b];
      c += cbuf[s * B + b];
    }
    loss_sum[s] += sum;
    correct[s] = c;
  }
};

struct OutputTransform {  // item = (member, row)
  LossType loss;
  int B, O;
  const float* Z; i64 sZ; float* P; i64 sP;
  __device__ void operator()(i64 r) const {
    const float* z = Z + (r / B) * sZ + (r % B) * O;
    float* p = P + (r / B) * sP + (r % B) * O;
    if (loss == LossType::CrossEntropy) {
      float mx = z[0];
      for (int j = 1; j < O; ++j) mx = fmaxf(mx, z[j]);
      float sum = 0.0f;
      for (int j = 0; j < O; ++j) sum += p[j] = expf(z[j] - mx);
      for (int j = 0; j < O; ++j) p[j] /= sum;
    } else if (loss == LossType::Bce) {
      for (int j = 0; j < O; ++j) p[j] = sigmoid(z[j]);
    } else {
      for (int j = 0; j < O; ++j) p[j] = z[j];
    }
  }
};

struct Gather {  // item = (member, row): the sampler picks the same rows as on the CPU
  BatchSampler sampler;
  std::uint32_t member0, pos0;
  int B, F, T;
  const float* X; const float* Y; float* Xb; i64 sXb; float* Yb; i64 sYb;
  const float* Ystats;  // [S, 2, T] or null (Backend::gather_batch)
  __device__ void operator()(i64 i) const {
    const i64 s = i / B;
    const int b = static_cast<int>(i % B);
    const i64 k = sampler.index(member0 + static_cast<std::uint32_t>(s), pos0 + static_cast<std::uint32_t>(b));
    float* xb = Xb + s * sXb + static_cast<i64>(b) * F;
    float* yb = Yb + s * sYb + static_cast<i64>(b) * T;
    for (int f = 0; f < F; ++f) xb[f] = X[k * F + f];
    if (Ystats) {
      const float* mean = Ystats + 2 * s * T;
      for (int t = 0; t < T; ++t) yb[t] = __fdiv_rn(Y[k * T + t] - mean[t], mean[T + t]);  // IEEE, as the CPU
    } else {
      for (int t = 0; t < T; ++t) yb[t] = Y[k * T + t];
    }
  }
};

template <OptimizerType O>
struct OptUpdate {  // item = (member, parameter)
  i64 n, stride;
  float* P; const float* G; float* S1; float* S2;
  const OptStep* h;
  float clip;
  const double* norm2;
  __device__ void operator()(i64 i) const {
    const i64 s = i / n, off = s * stride + i % n;
    const OptStep step = h[s];
    if (step.skip) return;
    const float k = clip > 0.0f ? clip_scale(clip, norm2[s]) : 1.0f;
    const float g = k != 1.0f ? G[off] * k : G[off];
    update_param<O>(P[off], g, S1[off], S2[off], step);
  }
};

struct FreezeDiverged {  // item = member
  const double* loss_sum;
  int* frozen;
  OptStep* opt;
  __device__ void operator()(i64 s) const {
    if (frozen_member(loss_sum[s], frozen[s])) opt[s].skip = true;
  }
};

// norm2[s] += Σ x² over member s's n values: one thread block per member, a grid-stride
// loop inside the block and a tree reduction in double.
__global__ void __launch_bounds__(kLaunchThreads) sum_squares_kernel(i64 n, const float* x, i64 sx, double* norm2) {
  __shared__ double part[kLaunchThreads];
  const i64 s = blockIdx.x;
  double acc = 0.0;
  for (i64 i = threadIdx.x; i < n; i += blockDim.x) {
    const double v = x[s * sx + i];
    acc += v * v;
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (static_cast<int>(threadIdx.x) < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) norm2[s] += part[0];
}

}  // namespace

void CudaBackend::bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z,
                                  std::int64_t sZ, const float* b, std::int64_t sb, float* A,
                                  std::int64_t sA) {
  dispatch_activation(act, [&]<Activation F>() {
    launch(stream_, info_.sm_count, static_cast<i64>(S) * rows * cols,
           BiasAct<F>{rows, cols, slope, Z, sZ, b, sb, A, sA});
  });
}

void CudaBackend::activation_backward(Activation act, float slope, int S, int rows, int cols,
                                      const float* Z, const float* A, std::int64_t s, float* dA) {
  if (act == Activation::Identity) return;
  const i64 n = static_cast<i64>(rows) * cols;
  dispatch_activation(act, [&]<Activation F>() {
    if constexpr (F != Activation::Identity)
      launch(stream_, info_.sm_count, S * n, ActBack<F>{n, s, slope, Z, A, dA});
  });
}

void CudaBackend::dropout(int S, int rows, int cols, const float* X, std::int64_t sX, float* Y, std::int64_t sY,
                          const DropoutKey& key) {
  const int groups = (cols + 3) / 4;
  const i64 items = static_cast<i64>(S) * rows * groups;
  if (items <= 0) return;
  launch(stream_, info_.sm_count, items, Dropout{rows, cols, groups, X, sX, Y, sY, key});
}

void CudaBackend::bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db,
                            std::int64_t sb) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * cols, BiasGrad{rows, cols, dZ, sZ, db, sb});
}

template <bool G>
void CudaBackend::loss_impl(const LossConfig& cfg, int S, int B, int O, const float* Z,
                            std::int64_t sZ, const float* Y, std::int64_t sY, float* dZ,
                            double* loss_sum, double* correct, const int* rows) {
  const i64 items = static_cast<i64>(S) * B;
  if (items <= 0) return;
  const int T = cfg.type == LossType::CrossEntropy ? 1 : O;
  // Scratch: per-sample loss and correct [S·B] doubles, then (forward) softmax rows [S·B·O],
  // then the members' class-weight sums [S].
  const std::size_t dbytes = static_cast<std::size_t>(items) * sizeof(double);
  const std::size_t fbytes = G ? 0 : static_cast<std::size_t>(items) * O * sizeof(float);
  char* base = static_cast<char*>(scratch(2 * dbytes + fbytes + static_cast<std::size_t>(S) * sizeof(float)));
  double* lbuf = reinterpret_cast<double*>(base);
  double* cbuf = reinterpret_cast<double*>(base + dbytes);
  float* g = G ? dZ : reinterpret_cast<float*>(base + 2 * dbytes);
  float* wsum = reinterpret_cast<float*>(base + 2 * dbytes + fbytes);
  const float* cw = cfg.type == LossType::CrossEntropy ? cfg.weights : nullptr;
  const float* pw = cfg.type == LossType::Bce ? cfg.weights : nullptr;
  if (cw) launch(stream_, info_.sm_count, S, WeightSums{B, cw, Y, sY, rows, wsum});
  dispatch_loss(cfg.type, [&]<LossType L>() {
    launch(stream_, info_.sm_count, items,
           SampleLoss<L, G>{B, O, T, cfg.huber_delta, cw, pw, wsum, Z, sZ, Y, sY, g, lbuf, cbuf, rows});
  });
  launch(stream_, info_.sm_count, S, MemberSums{B, lbuf, cbuf, rows, loss_sum, correct});
}

void CudaBackend::loss_backward(const LossConfig& loss, int S, int B, int O, const float* Z,
                                std::int64_t sZ, const float* Y, std::int64_t sY, float* dZ,
                                double* loss_sum, double* correct, const int* rows) {
  loss_impl<true>(loss, S, B, O, Z, sZ, Y, sY, dZ, loss_sum, correct, rows);
}

void CudaBackend::loss_forward(const LossConfig& loss, int S, int B, int O, const float* Z,
                               std::int64_t sZ, const float* Y, std::int64_t sY, double* loss_sum,
                               double* correct, const int* rows) {
  loss_impl<false>(loss, S, B, O, Z, sZ, Y, sY, nullptr, loss_sum, correct, rows);
}

void CudaBackend::output_transform(LossType loss, int S, int B, int O, const float* Z,
                                   std::int64_t sZ, float* P, std::int64_t sP) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * B, OutputTransform{loss, B, O, Z, sZ, P, sP});
}

void CudaBackend::gather_batch(const BatchSampler& sampler, std::uint32_t member0, int S,
                               std::uint32_t pos0, int B, const float* X, int F, const float* Y,
                               int T, float* Xb, std::int64_t sXb, float* Yb, std::int64_t sYb,
                               const float* Ystats) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * B,
         Gather{sampler, member0, pos0, B, F, T, X, Y, Xb, sXb, Yb, sYb, Ystats});
}

void CudaBackend::sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2) {
  if (S <= 0 || n <= 0) return;
  sum_squares_kernel<<<S, kLaunchThreads, 0, static_cast<cudaStream_t>(stream_)>>>(n, x, sx, norm2);
  TN_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::freeze_diverged(int S, const double* loss_sum, int* frozen, OptStep* opt) {
  if (S <= 0) return;
  launch(stream_, info_.sm_count, S, FreezeDiverged{loss_sum, frozen, opt});
}

void CudaBackend::optimizer_update(OptimizerType type, int S, std::int64_t n, float* P,
                                   const float* G, float* S1, float* S2, std::int64_t stride,
                                   const OptStep* h, float clip, const double* norm2) {
  dispatch_optimizer(type, [&]<OptimizerType O>() {
    launch(stream_, info_.sm_count, S * n, OptUpdate<O>{n, stride, P, G, S1, S2, h, clip, norm2});
  });
}

}  // namespace tn
