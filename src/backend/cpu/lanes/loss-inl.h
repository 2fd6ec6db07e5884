// The loss of a chunk of rows on lane vectors: softmax cross-entropy with the logits in
// registers, the other losses lane by lane; dL/dA and the per-lane sums.
// Per-target code: included by backend/cpu/lanes_mlp.cpp once for every SIMD target
// (Highway's foreach_target), inside that target's namespace.
#if defined(TN_LANES_LOSS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_LANES_LOSS_INL_H_
#undef TN_LANES_LOSS_INL_H_
#else
#define TN_LANES_LOSS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

#include "backend/cpu/lanes/layout-inl.h"
#include "backend/cpu/lanes/vec-inl.h"
#include "math/losses.h"
HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

// Cross-entropy's per-lane constants and sums of a lane group, in registers.
struct XentSums {
  IVec valid;
  Vec inv_b;
  DVec loss;
  Vec correct;  // whole counts, exact in float; flushed to the double sums after every chunk
};

TN_INLINE Vec sub_where(IVec m, Vec a, float b) { return select(m, a - b, a); }

// Softmax cross-entropy of RB rows (batch positions r0...) whose O logits are in registers
// (z), writing dL/dz to registers (d) and adding to the sums: softmax_xent's operations on
// lane vectors, rows interleaved so their exp/log chains overlap; exp and log skip the
// special cases their arguments here cannot reach (z − max ≤ 0, sum ≥ 1). With 2 outputs
// only the smaller logit needs exp: the larger one's term is exp(0) = 1 exactly
// ((mx − mx) + 1, NaN where mx is not finite, as exp gives), so the results are the same.
// Masked = false where every lane's batch holds all RB rows: the 0/1 row mask is then 1 in
// every lane, and multiplying by 1 changes nothing (not even NaN, ±0 or ±inf), so those
// multiplies and the mask are left out.
template <int O, int RB, bool Masked>
TN_INLINE void xent_regs(const Vec (&z)[RB][O], Vec (&d)[RB][O], const IVec (&label)[RB], int r0, XentSums& xs) {
  Vec keep[RB], mx[RB], zlab[RB], sum[RB], inv[RB], sample[RB];
  IVec arg[RB];
  // Stage by stage over the rows, so that their exp/log chains overlap.
#pragma GCC unroll 8
  for (int i = 0; i < RB; ++i) {
    keep[i] = Masked ? select(isplat(r0 + i) < xs.valid, splat(1.0f), Vec{}) : splat(1.0f);
    mx[i] = zlab[i] = z[i][0];
    arg[i] = IVec{};
#pragma GCC unroll 8
    for (int o = 1; o < O; ++o) {
      const IVec gt = z[i][o] > mx[i];
      arg[i] = gt ? isplat(o) : arg[i];
      mx[i] = select(gt, z[i][o], mx[i]);
      zlab[i] = select(label[i] == isplat(o), z[i][o], zlab[i]);
    }
  }
  if constexpr (O == 2) {
    Vec other[RB];
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i) other[i] = select(arg[i] == isplat(1), z[i][0], z[i][1]) - mx[i];
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i) other[i] = vexp<false>(other[i]);
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i) {
      const IVec second = arg[i] == isplat(1);
      const Vec top = (mx[i] - mx[i]) + 1.0f;
      d[i][0] = select(second, other[i], top);
      d[i][1] = select(second, top, other[i]);
    }
  } else {
#pragma GCC unroll 8
    for (int o = 0; o < O; ++o)
#pragma GCC unroll 8
      for (int i = 0; i < RB; ++i) d[i][o] = vexp<false>(z[i][o] - mx[i]);
  }
#pragma GCC unroll 8
  for (int i = 0; i < RB; ++i) {
    sum[i] = Vec{};
#pragma GCC unroll 8
    for (int o = 0; o < O; ++o) sum[i] += d[i][o];
    inv[i] = 1.0f / sum[i];
  }
#pragma GCC unroll 8
  for (int i = 0; i < RB; ++i) sample[i] = vlog<false>(sum[i]);  // sum ≥ 1 (the max's term is 1) or NaN
#pragma GCC unroll 8
  for (int i = 0; i < RB; ++i) {
#pragma GCC unroll 8
    for (int o = 0; o < O; ++o) {
      d[i][o] = sub_where(label[i] == isplat(o), d[i][o] * inv[i], 1.0f) * xs.inv_b;
      if constexpr (Masked) d[i][o] *= keep[i];
    }
    sample[i] = sample[i] + mx[i] - zlab[i];
    if constexpr (Masked) sample[i] *= keep[i];
    xs.correct += select(arg[i] == label[i], keep[i], Vec{});
  }
#pragma GCC unroll 8
  for (int i = 0; i < RB; ++i) xs.loss += __builtin_convertvector(sample[i], DVec);
}

// Whether some lane's batch ends before row r0 + B: only then do rows [r0, r0 + B) need
// xent_regs' row mask.
inline bool xent_masked(const XentSums& xs, int r0, int B) {
  bool masked = false;
  for (int l = 0; l < L; ++l) masked |= xs.valid[l] < r0 + B;
  return masked;
}

// xent_regs over B rows in memory (logits a, gradients to d): labels from the lane buffer
// y (T per row), or with rowidx (the rows' sample indices, every lane the same) from the
// training targets Yd.
template <int O>
void xent_mem(int B, int r0, int T, const float* a, const float* y, const std::int64_t* rowidx, const float* Yd,
              float* d, XentSums& xs) {
  const bool masked = xent_masked(xs, r0, B);
  auto rows = [&]<int RB, bool Masked>(int b) {
    Vec z[RB][O], g[RB][O];
    IVec label[RB];
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i) {
      label[i] = rowidx ? isplat(static_cast<int>(Yd[rowidx[b + i] * T]))
                        : __builtin_convertvector(load(y + static_cast<std::int64_t>(b + i) * T * L), IVec);
#pragma GCC unroll 8
      for (int o = 0; o < O; ++o) z[i][o] = load(a + (static_cast<std::int64_t>(b + i) * O + o) * L);
    }
    xent_regs<O, RB, Masked>(z, g, label, r0 + b, xs);
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i)
#pragma GCC unroll 8
      for (int o = 0; o < O; ++o) store(d + (static_cast<std::int64_t>(b + i) * O + o) * L, g[i][o]);
  };
  int b = 0;
  if (masked) {
    for (; b + 4 <= B; b += 4) rows.template operator()<4, true>(b);
    for (; b < B; ++b) rows.template operator()<1, true>(b);
  } else {
    for (; b + 4 <= B; b += 4) rows.template operator()<4, false>(b);
    for (; b < B; ++b) rows.template operator()<1, false>(b);
  }
}

// The same for any number of outputs, row by row through memory.
void xent_any(int B, int r0, int O, int T, const float* a, const float* y, float* d, XentSums& xs) {
  for (int b = 0; b < B; ++b) {
    const float* ab = a + static_cast<std::int64_t>(b) * O * L;
    float* db = d + static_cast<std::int64_t>(b) * O * L;
    const IVec label = __builtin_convertvector(load(y + static_cast<std::int64_t>(b) * T * L), IVec);
    const Vec keep = select(isplat(r0 + b) < xs.valid, splat(1.0f), Vec{});
    Vec mx = load(ab), zlab = mx;
    IVec arg = IVec{};
    for (int o = 1; o < O; ++o) {
      const Vec z = load(ab + o * L);
      const IVec gt = z > mx;
      arg = gt ? isplat(o) : arg;
      mx = select(gt, z, mx);
      zlab = select(label == isplat(o), z, zlab);
    }
    Vec sum = Vec{};
    for (int o = 0; o < O; ++o) {
      const Vec e = vexp(load(ab + o * L) - mx);
      store(db + o * L, e);
      sum += e;
    }
    const Vec inv = 1.0f / sum;
    for (int o = 0; o < O; ++o) store(db + o * L, sub_where(label == isplat(o), load(db + o * L) * inv, 1.0f) * xs.inv_b * keep);
    xs.correct += select(arg == label, keep, Vec{});
    xs.loss += __builtin_convertvector((vlog(sum) + mx - zlab) * keep, DVec);
  }
}

// Loss over `B` rows at batch position r0 for all lanes: writes dL/dA (mean over the batch,
// and over outputs for regression) and adds per-lane loss sums and correct counts. Mirrors
// CpuBackend::loss_*. Rows at or beyond a lane's valid count are masked: dL/dA = 0 and no
// loss; the mean is over each lane's valid rows.
template <LossType LT>
void lanes_loss(const LossConfig& cfg, int B, int r0, LossLanes& ll, int O, int T, const float* a, const float* y,
                float* d) {
  if constexpr (LT == LossType::CrossEntropy) {
    XentSums xs;
    std::memcpy(&xs.valid, ll.valid, sizeof xs.valid);
    xs.inv_b = load(ll.inv_b);
    std::memcpy(&xs.loss, ll.loss, sizeof xs.loss);
    xs.correct = Vec{};
    switch (O) {
      case 2: xent_mem<2>(B, r0, T, a, y, nullptr, nullptr, d, xs); break;
      case 3: xent_mem<3>(B, r0, T, a, y, nullptr, nullptr, d, xs); break;
      case 4: xent_mem<4>(B, r0, T, a, y, nullptr, nullptr, d, xs); break;
      default: xent_any(B, r0, O, T, a, y, d, xs); break;
    }
    std::memcpy(ll.loss, &xs.loss, sizeof xs.loss);
    DVec c;
    std::memcpy(&c, ll.correct, sizeof c);
    c += __builtin_convertvector(xs.correct, DVec);
    std::memcpy(ll.correct, &c, sizeof c);
  } else {
    const float inv_o = 1.0f / static_cast<float>(O);
    for (int b = 0; b < B; ++b) {
      float keep[L];  // 1 for valid rows, 0 for masked ones
      for (int l = 0; l < L; ++l) keep[l] = r0 + b < ll.valid[l] ? 1.0f : 0.0f;
      const float* ab = a + static_cast<std::int64_t>(b) * O * L;
      const float* yb = y + static_cast<std::int64_t>(b) * T * L;
      float* dbp = d + static_cast<std::int64_t>(b) * O * L;
      float sample[L];
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
          dbp[o * L + l] = g * ll.inv_b[l] * keep[l];
          if constexpr (LT == LossType::Bce) ll.correct[l] += ((z > 0.0f) == (t > 0.5f)) ? keep[l] / O : 0.0;
        }
      for (int l = 0; l < L; ++l) sample[l] /= static_cast<float>(O);
      for (int l = 0; l < L; ++l) ll.loss[l] += sample[l] * keep[l];
    }
  }
}

void loss_rows(const StepBatch& fb, LossLanes& ll, int rows, int r0, const float* a, const float* y, float* d) {
  dispatch_loss(fb.loss->type, [&]<LossType LT>() {
    lanes_loss<LT>(*fb.loss, rows, r0, ll, fb.shape->outputs(), fb.targets, a, y, d);
  });
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_LOSS_INL_H_
