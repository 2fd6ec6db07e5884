// The CPU's fused kernel for small MLPs: 16 members side by side in SIMD lanes. Every array
// of a lane group is stored [..., 16] with the member innermost, so every matrix product and
// every elementwise op is a plain vertical vector operation whatever the layer widths: no
// horizontal sums, no narrow rows, no per-member loop overhead. Each lane performs exactly
// the same sequence of operations, so a member's result does not depend on its lane, its
// neighbours or how many lanes are in use.
#include "backend/cpu/lanes_mlp.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "math/activations.h"
#include "math/losses.h"

namespace tn {
namespace {

constexpr int L = kLanes;

// Rows of the batch that go through forward, loss and backward together: their activations
// stay in L1/L2 while the weights and their gradients stay resident across chunks.
constexpr int kRowChunk = 16;

// Offsets (in floats) of one lane group's arrays inside the worker's scratch; activations
// hold `B` rows (a row chunk).
struct LaneLayout {
  std::int64_t X = 0, Y = 0, dA = 0, dB = 0, total = 0;
  std::vector<std::int64_t> W, b, dW, db, Z, A;

  LaneLayout(const MlpShape& s, int B, int T) {
    auto take = [&](std::int64_t n) { const std::int64_t at = total; total += n * L; return at; };
    X = take(static_cast<std::int64_t>(B) * s.inputs());
    Y = take(static_cast<std::int64_t>(B) * T);
    for (const DenseLayer& l : s.layers) {
      W.push_back(take(static_cast<std::int64_t>(l.in) * l.out));
      b.push_back(take(l.out));
      dW.push_back(take(static_cast<std::int64_t>(l.in) * l.out));
      db.push_back(take(l.out));
      Z.push_back(take(static_cast<std::int64_t>(B) * l.out));
      A.push_back(l.act == Activation::Identity ? Z.back() : take(static_cast<std::int64_t>(B) * l.out));
    }
    dA = take(static_cast<std::int64_t>(B) * s.max_width());
    dB = take(static_cast<std::int64_t>(B) * s.max_width());
  }
};

// One lane vector: 16 floats, one per member. GCC's vector extension keeps accumulators in
// registers (arrays of floats indexed in loops end up on the stack) and lowers to AVX-512 or
// pairs of AVX2 registers. Loads and stores go through memcpy (alignment-free, no aliasing UB).
typedef float Vec __attribute__((vector_size(L * sizeof(float))));
inline Vec load(const float* p) { Vec v; std::memcpy(&v, p, sizeof v); return v; }
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

// How a lane product initializes its sums.
enum class Init { Zero, Bias, Accumulate };

// A strided view of a matrix of lane vectors: element (r, c) at p + (r·sr + c·sc)·L.
struct LaneMat {
  const float* p;
  std::int64_t sr, sc;
  const float* at(std::int64_t r, std::int64_t c) const { return p + (r * sr + c * sc) * L; }
};

// C[r0..r0+RB, c0..c0+RC) = init + Σ_k A(r, k)·B(k, c), per lane, with RB×RC accumulators in
// registers so every load feeds RB or RC multiply-adds. Sums run over k in order, so the
// blocking never changes a lane's result.
template <int RB, int RC, Init I>
inline void lane_tile(const LaneMat& a, const LaneMat& b, float* c, std::int64_t csr, const float* bias, int K,
                      int r0, int c0) {
  Vec acc[RB][RC];
#pragma GCC unroll 4
  for (int i = 0; i < RB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < RC; ++j) {
      if constexpr (I == Init::Zero) acc[i][j] = Vec{};
      if constexpr (I == Init::Bias) acc[i][j] = load(bias + (c0 + j) * L);
      if constexpr (I == Init::Accumulate) acc[i][j] = load(c + ((r0 + i) * csr + c0 + j) * L);
    }
  for (int k = 0; k < K; ++k) {
    Vec av[RB];
#pragma GCC unroll 4
    for (int i = 0; i < RB; ++i) av[i] = load(a.at(r0 + i, k));
#pragma GCC unroll 4
    for (int j = 0; j < RC; ++j) {
      const Vec bv = load(b.at(k, c0 + j));
#pragma GCC unroll 4
      for (int i = 0; i < RB; ++i) acc[i][j] += av[i] * bv;
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < RB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < RC; ++j) store(c + ((r0 + i) * csr + c0 + j) * L, acc[i][j]);
}

template <int RB, Init I>
inline void lane_row_strip(const LaneMat& a, const LaneMat& b, float* c, std::int64_t csr, const float* bias,
                           int cols, int K, int r0) {
  int c0 = 0;
  for (; c0 + 4 <= cols; c0 += 4) lane_tile<RB, 4, I>(a, b, c, csr, bias, K, r0, c0);
  for (; c0 < cols; ++c0) lane_tile<RB, 1, I>(a, b, c, csr, bias, K, r0, c0);
}

// C[rows][cols] (row stride csr) = init + A·B over K, per lane, in 4×4 register tiles.
template <Init I>
void lane_product(const LaneMat& a, const LaneMat& b, float* c, std::int64_t csr, const float* bias, int rows,
                  int cols, int K) {
  int r0 = 0;
  for (; r0 + 4 <= rows; r0 += 4) lane_row_strip<4, I>(a, b, c, csr, bias, cols, K, r0);
  for (; r0 < rows; ++r0) lane_row_strip<1, I>(a, b, c, csr, bias, cols, K, r0);
}

// Z[B][out] = bias + X[B][in]·W[in][out].
void lanes_dense_forward(const float* x, const float* w, const float* bias, float* z, int B, int in, int out) {
  lane_product<Init::Bias>({x, in, 1}, {w, out, 1}, z, out, bias, B, out, in);
}

// dX[B][in] = dZ[B][out]·Wᵀ.
void lanes_dense_input_grad(const float* dz, const float* w, float* dx, int B, int in, int out) {
  lane_product<Init::Zero>({dz, out, 1}, {w, 1, out}, dx, in, nullptr, B, in, out);
}

// dW[in][out] += X[B][in]ᵀ·dZ[B][out]; db[out] += Σ_b dZ[b][out]. Rows are added in batch
// order, so accumulating row chunk by row chunk sums exactly as one pass would.
void lanes_dense_weight_grad(const float* x, const float* dz, float* dw, float* dbias, int B, int in, int out) {
  lane_product<Init::Accumulate>({x, 1, in}, {dz, out, 1}, dw, out, nullptr, in, out, B);
  for (int c = 0; c < out; ++c) {
    Vec acc = load(dbias + c * L);
    for (int b = 0; b < B; ++b) acc += load(dz + (static_cast<std::int64_t>(b) * out + c) * L);
    store(dbias + c * L, acc);
  }
}

// Loss over the batch for all lanes: writes dL/dA (mean over the batch, and over outputs for
// regression) and adds per-lane loss sums and correct counts. Mirrors CpuBackend::loss_*.
// Rows at or beyond a lane's `valid` count (batch position r0 + b) are masked: dL/dA = 0 and
// no loss; the mean is over each lane's valid rows.
template <LossType LT>
void lanes_loss(const LossConfig& cfg, int B, int r0, const int* valid, int O, int T, const float* a,
                const float* y, float* d, double* loss, double* correct) {
  float inv_b[L];
  for (int l = 0; l < L; ++l) inv_b[l] = 1.0f / static_cast<float>(valid[l] > 0 ? valid[l] : 1);
  const float inv_o = 1.0f / static_cast<float>(O);
  for (int b = 0; b < B; ++b) {
    float keep[L];  // 1 for valid rows, 0 for masked ones
    for (int l = 0; l < L; ++l) keep[l] = r0 + b < valid[l] ? 1.0f : 0.0f;
    const float* ab = a + static_cast<std::int64_t>(b) * O * L;
    const float* yb = y + static_cast<std::int64_t>(b) * T * L;
    float* dbp = d + static_cast<std::int64_t>(b) * O * L;
    float sample[L];
    if constexpr (LT == LossType::CrossEntropy) {
      float mx[L], sum[L] = {}, zlab[L] = {}, best[L];
      int arg[L] = {};
      for (int l = 0; l < L; ++l) mx[l] = best[l] = ab[l];
      for (int o = 1; o < O; ++o)
        for (int l = 0; l < L; ++l) {
          const float z = ab[o * L + l];
          mx[l] = z > mx[l] ? z : mx[l];
          arg[l] = z > best[l] ? o : arg[l];
          best[l] = z > best[l] ? z : best[l];
        }
      for (int o = 0; o < O; ++o)
        for (int l = 0; l < L; ++l) {
          const float e = m_exp(ab[o * L + l] - mx[l]);
          dbp[o * L + l] = e;
          sum[l] += e;
          zlab[l] += static_cast<int>(yb[l]) == o ? ab[o * L + l] : 0.0f;
        }
      float inv[L];
      for (int l = 0; l < L; ++l) inv[l] = 1.0f / sum[l];
      for (int o = 0; o < O; ++o)
        for (int l = 0; l < L; ++l) {
          const float p = dbp[o * L + l] * inv[l];
          dbp[o * L + l] = (p - (static_cast<int>(yb[l]) == o ? 1.0f : 0.0f)) * inv_b[l] * keep[l];
        }
      for (int l = 0; l < L; ++l) {
        sample[l] = m_log(sum[l]) + mx[l] - zlab[l];
        correct[l] += arg[l] == static_cast<int>(yb[l]) ? keep[l] : 0.0;
      }
    } else {
      for (int l = 0; l < L; ++l) sample[l] = 0.0f;
      for (int o = 0; o < O; ++o)
        for (int l = 0; l < L; ++l) {
          const float z = ab[o * L + l], t = yb[o * L + l];
          float g, v;
          if constexpr (LT == LossType::Bce) v = bce_logit(z, t, &g);
          else if constexpr (LT == LossType::Mse) v = mse_elem(z, t, &g);
          else if constexpr (LT == LossType::Mae) v = mae_elem(z, t, &g);
          else v = huber_elem(z, t, cfg.huber_delta, &g);
          sample[l] += v;
          if (O > 1) g *= inv_o;
          dbp[o * L + l] = g * inv_b[l] * keep[l];
          if constexpr (LT == LossType::Bce) correct[l] += ((z > 0.0f) == (t > 0.5f)) ? keep[l] / O : 0.0;
        }
      for (int l = 0; l < L; ++l) sample[l] /= static_cast<float>(O);
    }
    for (int l = 0; l < L; ++l) loss[l] += sample[l] * keep[l];
  }
}

// Parameters of members [g0, g0 + nm) of the block into lanes 0..nm-1 (other lanes zero),
// and their gradients zeroed.
void interleave_params(const FusedBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm) {
  const MlpShape& s = *fb.shape;
  for (int li = 0; li < static_cast<int>(s.layers.size()); ++li) {
    for (int part = 0; part < 2; ++part) {
      const int t = 2 * li + part;
      const std::int64_t n = fb.params->stride(t);
      float* dst = ws + (part == 0 ? lay.W[li] : lay.b[li]);
      if (nm < L) std::fill(dst, dst + n * L, 0.0f);
      for (int l = 0; l < nm; ++l) {
        const float* src = fb.params->t[t] + (g0 + l) * n;
        for (std::int64_t k = 0; k < n; ++k) dst[k * L + l] = src[k];
      }
      float* grad = ws + (part == 0 ? lay.dW[li] : lay.db[li]);
      std::fill(grad, grad + n * L, 0.0f);
    }
  }
}

// Inputs and targets of batch rows [r0, r0 + rows) for the group's lanes. Unused lanes get
// lane 0's sample (finite data; their results are discarded).
void gather_rows(const FusedBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, int r0, int rows) {
  const int F = fb.shape->inputs(), T = fb.T;
  float* x = ws + lay.X;
  float* y = ws + lay.Y;
  const bool shared = fb.sampler->mode == SampleMode::Shared;
  for (int b = 0; b < rows; ++b) {
    const std::uint32_t pos = fb.pos0 + r0 + b;
    std::int64_t idx[L];
    idx[0] = fb.sampler->index(fb.member0 + g0, pos);
    if (shared) {
      std::fill(idx + 1, idx + L, idx[0]);
    } else {
      for (int l = 1; l < nm; ++l) idx[l] = fb.sampler->index(fb.member0 + g0 + l, pos);
      std::fill(idx + nm, idx + L, idx[0]);
    }
    for (int f = 0; f < F; ++f) {
      float* xo = x + (static_cast<std::int64_t>(b) * F + f) * L;
      for (int l = 0; l < L; ++l) xo[l] = fb.X[idx[l] * F + f];
    }
    for (int t = 0; t < T; ++t) {
      float* yo = y + (static_cast<std::int64_t>(b) * T + t) * L;
      for (int l = 0; l < L; ++l) yo[l] = fb.Y[idx[l] * T + t];
    }
  }
}

void forward(const MlpShape& s, const LaneLayout& lay, float* ws, int B) {
  const float* in = ws + lay.X;
  for (std::size_t li = 0; li < s.layers.size(); ++li) {
    const DenseLayer& l = s.layers[li];
    float* z = ws + lay.Z[li];
    lanes_dense_forward(in, ws + lay.W[li], ws + lay.b[li], z, B, l.in, l.out);
    if (l.act != Activation::Identity) {
      float* a = ws + lay.A[li];
      const std::int64_t n = static_cast<std::int64_t>(B) * l.out * L;
      dispatch_activation(l.act, [&]<Activation F>() {
        for (std::int64_t k = 0; k < n; ++k) a[k] = act_forward<F>(z[k], l.slope);
      });
    }
    in = ws + lay.A[li];
  }
}

void backward(const MlpShape& s, const LaneLayout& lay, float* ws, int B) {
  float* dz = ws + lay.dA;
  float* dnext = ws + lay.dB;
  for (int li = static_cast<int>(s.layers.size()) - 1; li >= 0; --li) {
    const DenseLayer& l = s.layers[li];
    if (l.act != Activation::Identity) {
      const float* z = ws + lay.Z[li];
      const float* a = ws + lay.A[li];
      const std::int64_t n = static_cast<std::int64_t>(B) * l.out * L;
      dispatch_activation(l.act, [&]<Activation F>() {
        for (std::int64_t k = 0; k < n; ++k) dz[k] *= act_derivative<F>(z[k], a[k], l.slope);
      });
    }
    const float* in = li > 0 ? ws + lay.A[li - 1] : ws + lay.X;
    lanes_dense_weight_grad(in, dz, ws + lay.dW[li], ws + lay.db[li], B, l.in, l.out);
    if (li == 0) break;
    lanes_dense_input_grad(dz, ws + lay.W[li], dnext, B, l.in, l.out);
    std::swap(dz, dnext);
  }
}

void deinterleave_grads(const FusedBatch& fb, const LaneLayout& lay, const float* ws, int g0, int nm) {
  for (int li = 0; li < static_cast<int>(fb.shape->layers.size()); ++li)
    for (int part = 0; part < 2; ++part) {
      const int t = 2 * li + part;
      const std::int64_t n = fb.grads->stride(t);
      const float* src = ws + (part == 0 ? lay.dW[li] : lay.db[li]);
      for (int l = 0; l < nm; ++l) {
        float* dst = fb.grads->t[t] + (g0 + l) * n;
        for (std::int64_t k = 0; k < n; ++k) dst[k] = src[k * L + l];
      }
    }
}

}  // namespace

std::int64_t lanes_scratch_bytes(const MlpShape& shape, int batch, int targets) {
  return LaneLayout(shape, std::min(batch, kRowChunk), targets).total * static_cast<std::int64_t>(sizeof(float));
}

void lanes_loss_grad(const FusedBatch& fb) {
  const MlpShape& s = *fb.shape;
  const int rc = std::min(fb.B, kRowChunk);
  const LaneLayout lay(s, rc, fb.T);
  thread_local std::vector<float> scratch;
  if (scratch.size() < static_cast<std::size_t>(lay.total)) scratch.resize(lay.total);
  float* ws = scratch.data();
  const int O = s.outputs();
  for (int g0 = 0; g0 < fb.S; g0 += L) {
    const int nm = std::min(L, fb.S - g0);
    interleave_params(fb, lay, ws, g0, nm);
    double loss[L] = {}, correct[L] = {};
    int valid[L];
    for (int l = 0; l < L; ++l) valid[l] = fb.rows && l < nm ? fb.rows[g0 + l] : fb.B;
    for (int r0 = 0; r0 < fb.B; r0 += rc) {
      const int rows = std::min(rc, fb.B - r0);
      gather_rows(fb, lay, ws, g0, nm, r0, rows);
      forward(s, lay, ws, rows);
      dispatch_loss(fb.loss->type, [&]<LossType LT>() {
        lanes_loss<LT>(*fb.loss, rows, r0, valid, O, fb.T, ws + lay.A.back(), ws + lay.Y, ws + lay.dA, loss, correct);
      });
      backward(s, lay, ws, rows);
    }
    for (int l = 0; l < nm; ++l) {
      fb.loss_sum[g0 + l] += loss[l];
      fb.correct[g0 + l] += correct[l];
    }
    deinterleave_grads(fb, lay, ws, g0, nm);
  }
}

}  // namespace tn
