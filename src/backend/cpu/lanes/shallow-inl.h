// The shallow lane kernel: one hidden layer with at most 4 inputs and outputs, a block of
// rows' inputs, outputs and output gradients in registers while the hidden units stream.
// Per-target code: included by backend/cpu/lanes_mlp.cpp once for every SIMD target
// (Highway's foreach_target), inside that target's namespace.
#if defined(TN_LANES_SHALLOW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_LANES_SHALLOW_INL_H_
#undef TN_LANES_SHALLOW_INL_H_
#else
#define TN_LANES_SHALLOW_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/lanes/layout-inl.h"
#include "backend/cpu/lanes/loss-inl.h"
#include "backend/cpu/lanes/vec-inl.h"
HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

// ---- the shallow kernel: one hidden layer, inputs and outputs in registers ----

// Where the cross-entropy of a chunk's rows is computed. With AVX-512's 4-row blocks, on the
// block's logits still in registers, its exp/log chains overlapping the next block's
// multiply-adds. AVX2's 2-row blocks leave too little work between two blocks' chains to
// hide them, so there the chunk's logits go to memory and xent_mem takes them 4 rows at a
// time (W1 on AVX2 in 0.85x the time): the same operations on the same rows, the same bits.
constexpr bool kXentPerBlock = HWY_TARGET == HWY_AVX3;

// F inputs → H hidden (activation A) → O outputs. Each block of RB rows keeps its inputs,
// outputs and output gradients in registers and streams the hidden units (H at run time):
// per unit, the forward costs F + O multiply-adds a row and the backward 2·O + F, with the
// unit's weights loaded once per block and its gradient sums read and written once per
// block. Only the block's hidden activations go through memory (Hb, [H][RB]). Every sum
// runs in the generic kernel's order, so both give the same results.
template <int F, int O, Activation A>
struct Shallow {
  // Inputs of rows [rr, rr + RB) of the chunk: from the lane buffer X, or with a shared
  // sample order (rowidx: their sample rows) straight from the data.
  template <int RB>
  static TN_INLINE void inputs(const StepBatch& fb, const LaneLayout& lay, const float* ws, int rr,
                               const std::int64_t* rowidx, Vec (&x)[RB][F]) {
    if (rowidx) {
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int f = 0; f < F; ++f) x[r][f] = splat(fb.X[rowidx[rr + r] * F + f]);
    } else {
      const float* X = ws + lay.X + static_cast<std::int64_t>(rr) * F * L;
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int f = 0; f < F; ++f) x[r][f] = load(X + (r * F + f) * L);
    }
  }

  // Forward of rows [rr, rr + RB): logits to Zb, the hidden activations (or z, where the
  // activation keeps it) to the block's part of Hb, [hidden][row].
  template <int RB>
  static TN_INLINE void forward(const StepBatch& fb, const LaneLayout& lay, float* ws, int H, int rr,
                                const std::int64_t* rowidx, Vec slope, XentSums* xs, int r0, bool masked) {
    const float* W0 = ws + lay.P + lay.W(0);
    const float* b0 = ws + lay.P + lay.b(0);
    const float* W1 = ws + lay.P + lay.W(1);
    const float* b1 = ws + lay.P + lay.b(1);
    float* Hb = ws + lay.Hb + static_cast<std::int64_t>(rr) * H * L;
    Vec x[RB][F];
    inputs<RB>(fb, lay, ws, rr, rowidx, x);
    Vec z[RB][O];
#pragma GCC unroll 8
    for (int o = 0; o < O; ++o) {
      const Vec bo = load(b1 + o * L);
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r) z[r][o] = bo;
    }
    for (int j = 0; j < H; ++j) {
      Vec w0[F], w1[O];
#pragma GCC unroll 8
      for (int f = 0; f < F; ++f) w0[f] = in_register(load(W0 + (static_cast<std::int64_t>(f) * H + j) * L));
#pragma GCC unroll 8
      for (int o = 0; o < O; ++o) w1[o] = in_register(load(W1 + (static_cast<std::int64_t>(j) * O + o) * L));
      const Vec bj = load(b0 + static_cast<std::int64_t>(j) * L);
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r) {
        Vec h = bj;
#pragma GCC unroll 8
        for (int f = 0; f < F; ++f) h += x[r][f] * w0[f];
        const Vec a = vact<A>(h, slope);
        store(Hb + (static_cast<std::int64_t>(j) * RB + r) * L, keeps_z(A) ? h : a);
#pragma GCC unroll 8
        for (int o = 0; o < O; ++o) z[r][o] += a * w1[o];
      }
    }
    if (xs) {
      // Cross-entropy of the block's rows on the logits in registers (xent_mem's operations
      // on the same rows, so the same results): their gradients to dOut, no logits stored,
      // and the block's exp/log chains overlap the next block's multiply-adds.
      IVec label[RB];
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r)
        label[r] = rowidx ? isplat(static_cast<int>(fb.Y[rowidx[rr + r] * fb.targets]))
                          : __builtin_convertvector(load(ws + lay.Y + static_cast<std::int64_t>(rr + r) * fb.targets * L), IVec);
      Vec d[RB][O];
      if (masked) xent_regs<O, RB, true>(z, d, label, r0 + rr, *xs);
      else xent_regs<O, RB, false>(z, d, label, r0 + rr, *xs);
      float* D = ws + lay.dOut + static_cast<std::int64_t>(rr) * O * L;
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int o = 0; o < O; ++o) store(D + (r * O + o) * L, d[r][o]);
      return;
    }
    float* Zb = ws + lay.Zb + static_cast<std::int64_t>(rr) * O * L;
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
      for (int o = 0; o < O; ++o) store(Zb + (r * O + o) * L, z[r][o]);
  }

  // Backward of rows [rr, rr + RB) from dL/dz in dOut: gradients added to G.
  template <int RB>
  static TN_INLINE void backward(const StepBatch& fb, const LaneLayout& lay, float* ws, int H, int rr,
                                 const std::int64_t* rowidx, Vec slope) {
    const float* W1 = ws + lay.P + lay.W(1);
    float* dW0 = ws + lay.G + lay.W(0);
    float* db0 = ws + lay.G + lay.b(0);
    float* dW1 = ws + lay.G + lay.W(1);
    float* db1 = ws + lay.G + lay.b(1);
    const float* Hb = ws + lay.Hb + static_cast<std::int64_t>(rr) * H * L;
    const float* D = ws + lay.dOut + static_cast<std::int64_t>(rr) * O * L;
    Vec x[RB][F], dz[RB][O];
    inputs<RB>(fb, lay, ws, rr, rowidx, x);
#pragma GCC unroll 8
    for (int o = 0; o < O; ++o) {
      Vec acc = load(db1 + o * L);
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r) {
        dz[r][o] = load(D + (r * O + o) * L);
        acc += dz[r][o];
      }
      store(db1 + o * L, acc);
    }
    for (int j = 0; j < H; ++j) {
      Vec w1[O], g1[O], g0[F];
#pragma GCC unroll 8
      for (int o = 0; o < O; ++o) {
        w1[o] = in_register(load(W1 + (static_cast<std::int64_t>(j) * O + o) * L));
        g1[o] = load(dW1 + (static_cast<std::int64_t>(j) * O + o) * L);
      }
#pragma GCC unroll 8
      for (int f = 0; f < F; ++f) g0[f] = load(dW0 + (static_cast<std::int64_t>(f) * H + j) * L);
      Vec gb = load(db0 + static_cast<std::int64_t>(j) * L);
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r) {
        const Vec hv = in_register(load(Hb + (static_cast<std::int64_t>(j) * RB + r) * L));  // a, or z where A keeps z
        const Vec a = keeps_z(A) ? vact<A>(hv, slope) : hv;
#pragma GCC unroll 8
        for (int o = 0; o < O; ++o) g1[o] += a * dz[r][o];
        Vec dh = Vec{};
#pragma GCC unroll 8
        for (int o = 0; o < O; ++o) dh += dz[r][o] * w1[o];
        if constexpr (A == Activation::Relu) dh = relu_backward(dh, hv);
        else if constexpr (A != Activation::Identity) dh = dh * vderiv<A>(hv, a, slope);
        gb += dh;
#pragma GCC unroll 8
        for (int f = 0; f < F; ++f) g0[f] += x[r][f] * dh;
      }
#pragma GCC unroll 8
      for (int o = 0; o < O; ++o) store(dW1 + (static_cast<std::int64_t>(j) * O + o) * L, g1[o]);
#pragma GCC unroll 8
      for (int f = 0; f < F; ++f) store(dW0 + (static_cast<std::int64_t>(f) * H + j) * L, g0[f]);
      store(db0 + static_cast<std::int64_t>(j) * L, gb);
    }
  }

  // Calls f.template operator()<RB>(rr) over the n rows of a chunk: blocks of kRowBlock, then
  // single rows.
  template <class Fn>
  static TN_INLINE void blocks(int n, Fn&& f) {
    int rr = 0;
    for (; rr + kRowBlock <= n; rr += kRowBlock) f.template operator()<kRowBlock>(rr);
    for (; rr < n; ++rr) f.template operator()<1>(rr);
  }

  // The batch in chunks of rows: forward of the chunk, its loss (cross-entropy on lane
  // vectors here, other losses by lanes_loss), its backward.
  static void group(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, LossLanes& ll) {
    const int H = fb.shape->layers[0].out;
    const Vec slope = splat(fb.shape->layers[0].slope);
    const bool xe = fb.loss->type == LossType::CrossEntropy;
    XentSums xs;
    std::memcpy(&xs.valid, ll.valid, sizeof xs.valid);
    xs.inv_b = load(ll.inv_b);
    std::memcpy(&xs.loss, ll.loss, sizeof xs.loss);
    // With a shared sample order and cross-entropy, inputs and labels come straight from the
    // data (one broadcast each) instead of through the lane buffers.
    const bool direct = xe && fb.sampler->mode == SampleMode::Shared;
    std::int64_t idx[kShallowChunk];
    const std::int64_t* rowidx = direct ? idx : nullptr;
    for (int r0 = 0; r0 < fb.B; r0 += lay.R) {
      const int n = std::min(lay.R, fb.B - r0);
      if (direct) {
        for (int b = 0; b < n; ++b) idx[b] = fb.sampler->index(fb.member0 + g0, fb.pos0 + r0 + b);
      } else {
        gather_rows(fb, lay, ws, g0, nm, r0, n);
      }
      if (xe) {
        xs.correct = Vec{};
        if constexpr (kXentPerBlock) {
          const bool masked = xent_masked(xs, r0, n);
          blocks(n, [&]<int RB>(int rr) { forward<RB>(fb, lay, ws, H, rr, rowidx, slope, &xs, r0, masked); });
        } else {
          blocks(n, [&]<int RB>(int rr) { forward<RB>(fb, lay, ws, H, rr, rowidx, slope, nullptr, r0, false); });
          xent_mem<O>(n, r0, fb.targets, ws + lay.Zb, ws + lay.Y, rowidx, fb.Y, ws + lay.dOut, xs);
        }
        DVec c;
        std::memcpy(&c, ll.correct, sizeof c);
        c += __builtin_convertvector(xs.correct, DVec);
        std::memcpy(ll.correct, &c, sizeof c);
      } else {
        blocks(n, [&]<int RB>(int rr) { forward<RB>(fb, lay, ws, H, rr, rowidx, slope, nullptr, r0, false); });
        loss_rows(fb, ll, n, r0, ws + lay.Zb, ws + lay.Y, ws + lay.dOut);
      }
      blocks(n, [&]<int RB>(int rr) { backward<RB>(fb, lay, ws, H, rr, rowidx, slope); });
    }
    if (xe) std::memcpy(ll.loss, &xs.loss, sizeof xs.loss);
  }
};

template <int F, int O>
void shallow_group_fo(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, LossLanes& ll) {
  dispatch_activation(fb.shape->layers[0].act, [&]<Activation A>() {
    if constexpr (shallow_activation(A)) Shallow<F, O, A>::group(fb, lay, ws, g0, nm, ll);
  });
}

template <int F>
void shallow_group_f(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, LossLanes& ll) {
  switch (fb.shape->outputs()) {
    case 1: return shallow_group_fo<F, 1>(fb, lay, ws, g0, nm, ll);
    case 2: return shallow_group_fo<F, 2>(fb, lay, ws, g0, nm, ll);
    case 3: return shallow_group_fo<F, 3>(fb, lay, ws, g0, nm, ll);
    default: return shallow_group_fo<F, 4>(fb, lay, ws, g0, nm, ll);
  }
}
static_assert(kShallowMaxIn == 4 && kShallowMaxOut == 4, "shallow_group dispatches widths 1..4");

void shallow_group(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, LossLanes& ll) {
  if constexpr (!kShallowKernel) return;  // never called (is_shallow is false)
  switch (fb.shape->inputs()) {
    case 1: return shallow_group_f<1>(fb, lay, ws, g0, nm, ll);
    case 2: return shallow_group_f<2>(fb, lay, ws, g0, nm, ll);
    case 3: return shallow_group_f<3>(fb, lay, ws, g0, nm, ll);
    default: return shallow_group_f<4>(fb, lay, ws, g0, nm, ll);
  }
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_SHALLOW_INL_H_
