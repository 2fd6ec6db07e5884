// The generic lane kernel: any dense stack, layer by layer, with register-tiled lane
// products whose epilogues apply bias and activation (forward), the activation derivative
// (input gradient) and the bias gradient (weight gradient).
// Per-target code: included by backend/cpu/lanes_mlp.cpp once for every SIMD target
// (Highway's foreach_target), inside that target's namespace.
#if defined(TN_LANES_GENERIC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_LANES_GENERIC_INL_H_
#undef TN_LANES_GENERIC_INL_H_
#else
#define TN_LANES_GENERIC_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "backend/cpu/lanes/layout-inl.h"
#include "backend/cpu/lanes/loss-inl.h"
#include "backend/cpu/lanes/vec-inl.h"
HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

// ---- the generic kernel: register-tiled lane products, layer by layer ----

// A strided view of a matrix of lane vectors: element (r, c) at p + (r·sr + c·sc)·L.
struct LaneMat {
  const float* p;
  std::int64_t sr, sc;
  const float* at(std::int64_t r, std::int64_t c) const { return p + (r * sr + c * sc) * L; }
};

// acc[i][j] += Σ_k A(r0 + i, k)·B(k, c0 + j), per lane, k in order: every load feeds RB or
// RC multiply-adds, and the blocking never changes a lane's result.
template <int RB, int RC>
TN_INLINE void mac(Vec (&acc)[RB][RC], const LaneMat& a, const LaneMat& b, int K, int r0, int c0) {
  for (int k = 0; k < K; ++k) {
    Vec av[RB];
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i) av[i] = in_register(load(a.at(r0 + i, k)));
#pragma GCC unroll 8
    for (int j = 0; j < RC; ++j) {
      const Vec bv = in_register(load(b.at(k, c0 + j)));
#pragma GCC unroll 8
      for (int i = 0; i < RB; ++i) acc[i][j] += av[i] * bv;
    }
  }
}

// Covers a rows×cols result with tiles: kTileRows×4 where possible, kStripRows-row strips
// for the last 1-3 columns, and single rows for the remainders (few tile shapes: every one
// is compiled for every epilogue). op.template run<RB, RC>(r0, c0). A tile's accumulators
// and the loads feeding them fit the target's registers: 4×4 and 8-row strips with 32 (AVX-512,
// NEON), 3×4 and 4-row strips with AVX2's 16 (4×4 spilled there, and the layer-by-layer
// kernel lost to per-member GEMMs on every two-hidden-layer shape measured).
constexpr int kTileRows = HWY_TARGET == HWY_AVX2 ? 3 : 4;
constexpr int kStripRows = HWY_TARGET == HWY_AVX2 ? 4 : 8;
template <int RB, int RC, class Op>
TN_INLINE void cover_rows(const Op& op, int r0, int rows, int c0) {
  for (; r0 + RB <= rows; r0 += RB) op.template run<RB, RC>(r0, c0);
  if constexpr (RB > 1)
    for (; r0 < rows; ++r0) op.template run<1, RC>(r0, c0);
}
template <class Op>
TN_INLINE void cover(const Op& op, int rows, int cols) {
  int c0 = 0;
  for (; c0 + 4 <= cols; c0 += 4) cover_rows<kTileRows, 4>(op, 0, rows, c0);
  switch (cols - c0) {
    case 3: cover_rows<kStripRows, 3>(op, 0, rows, c0); break;
    case 2: cover_rows<kStripRows, 2>(op, 0, rows, c0); break;
    case 1: cover_rows<kStripRows, 1>(op, 0, rows, c0); break;
    default: break;
  }
}

// How a forward tile stores its result: z (identity, or activations applied by a pass
// afterwards: tanh, sigmoid, gelu), relu(z), or z and leaky_relu(z).
enum class FwdEpi { Z, Relu, Leaky };
constexpr FwdEpi fwd_epilogue(Activation a) {
  return a == Activation::Relu ? FwdEpi::Relu : a == Activation::LeakyRelu ? FwdEpi::Leaky : FwdEpi::Z;
}

// Forward: Z[rows][out] = bias + In[rows][in]·W[in][out], stored by the epilogue E.
template <FwdEpi E>
struct ForwardOp {
  LaneMat in, w;
  const float* bias;
  float* A;
  float* Z;
  int out, K;
  Vec slope;
  template <int RB, int RC>
  TN_INLINE void run(int r0, int c0) const {
    Vec acc[RB][RC];
#pragma GCC unroll 8
    for (int j = 0; j < RC; ++j) {
      const Vec bj = load(bias + static_cast<std::int64_t>(c0 + j) * L);
#pragma GCC unroll 8
      for (int i = 0; i < RB; ++i) acc[i][j] = bj;
    }
    mac<RB, RC>(acc, in, w, K, r0, c0);
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < RC; ++j) {
        const std::int64_t at = (static_cast<std::int64_t>(r0 + i) * out + c0 + j) * L;
        if constexpr (E == FwdEpi::Relu) {
          store(A + at, vact<Activation::Relu>(acc[i][j], slope));
        } else {
          store(Z + at, acc[i][j]);
          if constexpr (E == FwdEpi::Leaky) store(A + at, vact<Activation::LeakyRelu>(acc[i][j], slope));
        }
      }
  }
};

// Input gradient of layer l: dZ[rows][out]·Wᵀ times the derivative of layer l−1's
// activation, written over that layer's activations A, which it replaces (nothing reads
// them afterwards).
template <Activation F>
struct InputGradOp {
  LaneMat dz, wt;
  float* A;        // layer l−1's activations, replaced by dL/dZ of layer l−1
  const float* Z;  // layer l−1's pre-activations (where it keeps them)
  const float* M;  // layer l−1's dropout factors (the product is dL/dD; times M it is dL/dA), or null
  int cols, K;
  Vec slope;
  template <int RB, int RC>
  TN_INLINE void run(int r0, int c0) const {
    Vec acc[RB][RC];
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < RC; ++j) acc[i][j] = Vec{};
    mac<RB, RC>(acc, dz, wt, K, r0, c0);
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < RC; ++j) {
        const std::int64_t at = (static_cast<std::int64_t>(r0 + i) * cols + c0 + j) * L;
        const Vec d = M ? acc[i][j] * load(M + at) : acc[i][j];
        if constexpr (F == Activation::Identity) {
          store(A + at, d);
        } else if constexpr (F == Activation::Relu) {
          store(A + at, relu_backward(d, load(A + at)));
        } else {
          const Vec a = keeps_z(F) ? Vec{} : load(A + at);
          const Vec z = keeps_z(F) ? load(Z + at) : a;
          store(A + at, d * vderiv<F>(z, a, slope));
        }
      }
  }
};

// Weight gradient: dW[in][out] += In[rows][in]ᵀ·dZ[rows][out] and db[out] += Σ_rows dZ (in
// the tiles of the first row strip, from the dZ loads they make anyway). Rows are added in
// batch order, so accumulating chunk by chunk sums exactly as one pass would.
struct WeightGradOp {
  LaneMat in, dz;
  float* dW;
  float* db;
  int out, K;
  template <int RB, int RC>
  TN_INLINE void run(int r0, int c0) const {
    Vec acc[RB][RC];
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < RC; ++j) acc[i][j] = load(dW + (static_cast<std::int64_t>(r0 + i) * out + c0 + j) * L);
    if (r0 == 0) {
      Vec bacc[RC];
#pragma GCC unroll 8
      for (int j = 0; j < RC; ++j) bacc[j] = load(db + static_cast<std::int64_t>(c0 + j) * L);
      for (int k = 0; k < K; ++k) {
        Vec av[RB];
#pragma GCC unroll 8
        for (int i = 0; i < RB; ++i) av[i] = in_register(load(in.at(r0 + i, k)));
#pragma GCC unroll 8
        for (int j = 0; j < RC; ++j) {
          const Vec bv = in_register(load(dz.at(k, c0 + j)));
          bacc[j] += bv;
#pragma GCC unroll 8
          for (int i = 0; i < RB; ++i) acc[i][j] += av[i] * bv;
        }
      }
#pragma GCC unroll 8
      for (int j = 0; j < RC; ++j) store(db + static_cast<std::int64_t>(c0 + j) * L, bacc[j]);
    } else {
      mac<RB, RC>(acc, in, dz, K, r0, c0);
    }
#pragma GCC unroll 8
    for (int i = 0; i < RB; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < RC; ++j) store(dW + (static_cast<std::int64_t>(r0 + i) * out + c0 + j) * L, acc[i][j]);
  }
};

// Where a chunk's dropout masks come from: lane l is member member0 + l (or members[l] for
// the lanes < count, when given), chunk row b is at epoch position pos0 + b. Null: no
// dropout (not a training step).
struct LaneDropout {
  std::uint64_t seed;
  std::uint32_t member0, epoch, pos0;
  const std::uint32_t* members;
  int count;
  std::uint32_t member(int lane) const {
    if (!members) return member0 + static_cast<std::uint32_t>(lane);
    return lane < count ? members[lane] : 0u;  // lanes past the block's members: masks not used
  }
};

// The dropout factors of layer li for `rows` rows of every lane (math/dropout.h, the same
// values as Backend::dropout), into M [rows][out][lanes].
void dropout_factors(const DenseLayer& l, std::uint32_t li, const LaneDropout& d, int rows, float* M) {
  for (int b = 0; b < rows; ++b)
    for (int lane = 0; lane < L; ++lane) {
      const Philox4x32 row = dropout_row_key(d.seed, d.member(lane), d.epoch, d.pos0 + b);
      for (int j0 = 0; j0 < l.out; j0 += 4) {
        const Philox4x32 w = dropout_unit_words(row, li, j0 / 4);
        for (int q = 0; q < 4 && j0 + q < l.out; ++q)
          M[(static_cast<std::int64_t>(b) * l.out + j0 + q) * L + lane] = dropout_scale(w.v[q], l.dropout);
      }
    }
}

void forward(const ModelShape& s, const LaneLayout& lay, float* ws, int rows, const LaneDropout* drop) {
  const float* in = ws + lay.X;
  for (std::size_t li = 0; li < s.layers.size(); ++li) {
    const DenseLayer& l = s.layers[li];
    float* A = ws + lay.A[li];
    float* Z = ws + lay.Z[li];
    dispatch_activation(l.act, [&]<Activation F>() {
      const ForwardOp<fwd_epilogue(F)> op{{in, l.in, 1}, {ws + lay.P + lay.W(static_cast<int>(li)), l.out, 1},
                                          ws + lay.P + lay.b(static_cast<int>(li)), A, Z, l.out, l.in, splat(l.slope)};
      cover(op, rows, l.out);
      if constexpr (F == Activation::Tanh || F == Activation::Sigmoid || F == Activation::Gelu) {
        const Vec slope = splat(l.slope);
        for (std::int64_t k = 0; k < static_cast<std::int64_t>(rows) * l.out * L; k += L) store(A + k, vact<F>(load(Z + k), slope));
      }
    });
    in = A;
    if (drop && lay.M[li] >= 0) {  // D = A ⊙ M feeds the next layer
      float* M = ws + lay.M[li];
      float* D = ws + lay.D[li];
      dropout_factors(l, static_cast<std::uint32_t>(li), *drop, rows, M);
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(rows) * l.out * L; k += L) store(D + k, load(A + k) * load(M + k));
      in = D;
    }
  }
}

// Backward from dL/dA of the outputs (in dOut): gradients added to G. `dropped`: the forward
// pass applied dropout.
void backward(const ModelShape& s, const LaneLayout& lay, float* ws, int rows, bool dropped) {
  const int last = static_cast<int>(s.layers.size()) - 1;
  float* dz = ws + lay.dOut;
  const DenseLayer& out = s.layers[last];
  dispatch_activation(out.act, [&]<Activation F>() {
    if constexpr (F != Activation::Identity) {
      const float* A = ws + lay.A[last];
      const float* Z = ws + lay.Z[last];
      const Vec slope = splat(out.slope);
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(rows) * out.out * L; k += L) {
        const Vec a = load(A + k);
        store(dz + k, load(dz + k) * vderiv<F>(keeps_z(F) ? load(Z + k) : a, a, slope));
      }
    }
  });
  for (int li = last; li >= 0; --li) {
    const DenseLayer& l = s.layers[li];
    const float* in = li > 0 ? ws + (dropped ? lay.D[li - 1] : lay.A[li - 1]) : ws + lay.X;
    const WeightGradOp wg{{in, 1, l.in}, {dz, l.out, 1}, ws + lay.G + lay.W(li), ws + lay.G + lay.b(li), l.out, rows};
    cover(wg, l.in, l.out);
    if (li == 0) break;
    const DenseLayer& p = s.layers[li - 1];
    float* A = ws + lay.A[li - 1];
    const float* Z = ws + lay.Z[li - 1];
    dispatch_activation(p.act, [&]<Activation F>() {
      // Gelu's derivative (erf and exp) goes by a pass over the plain product, which needs
      // only Z: its tiles are the identity's.
      constexpr Activation E = F == Activation::Gelu ? Activation::Identity : F;
      const float* M = dropped && lay.M[li - 1] >= 0 ? ws + lay.M[li - 1] : nullptr;
      const InputGradOp<E> op{{dz, l.out, 1}, {ws + lay.P + lay.W(li), 1, l.out}, A, Z, M, l.in, l.out, splat(p.slope)};
      cover(op, rows, l.in);
      if constexpr (F == Activation::Gelu) {
        const Vec slope = splat(p.slope);
        for (std::int64_t k = 0; k < static_cast<std::int64_t>(rows) * l.in * L; k += L)
          store(A + k, load(A + k) * vderiv<F>(load(Z + k), Vec{}, slope));
      }
    });
    dz = A;
  }
}

void generic_group(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, LossLanes& ll) {
  const ModelShape& s = *fb.shape;
  const bool dropped = fb.epoch != nullptr;
  for (int r0 = 0; r0 < fb.B; r0 += lay.R) {
    const int rows = std::min(lay.R, fb.B - r0);
    gather_rows(fb, lay, ws, g0, nm, r0, rows);
    const LaneDropout drop{fb.seed, fb.member0 + static_cast<std::uint32_t>(g0), dropped ? *fb.epoch : 0u,
                           fb.pos0 + static_cast<std::uint32_t>(r0), fb.members ? fb.members + g0 : nullptr, nm};
    forward(s, lay, ws, rows, dropped ? &drop : nullptr);
    loss_rows(fb, ll, rows, r0, ws + lay.A.back(), ws + lay.Y, ws + lay.dOut);
    backward(s, lay, ws, rows, dropped);
  }
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_GENERIC_INL_H_
