// The CPU's fused kernel for small MLPs: 16 members side by side in SIMD lanes. Every array
// of a lane group is stored [..., 16] with the member innermost, so every matrix product and
// every elementwise op is a plain vertical vector operation whatever the layer widths: no
// horizontal sums, no narrow rows, no per-member loop overhead. Each lane performs exactly
// the same sequence of operations, so a member's result does not depend on its lane, its
// neighbours or how many lanes are in use.
//
// A lane group's step: its parameters are transposed into the lane layout, the batch runs in
// chunks of rows (forward, loss, backward) while the parameters and gradients stay in the
// core's L1/L2 cache, and then the gradients are transposed back: to the gradient arrays
// (lanes_loss_grad), or to scratch still in cache, from which each member's optimizer step
// updates its parameters and state in place (lanes_step, the step kernel): no pass over swarm-sized gradient
// arrays, and the parameters and state are never transposed.
//
// Two kernels compute the rows: networks with one hidden layer and at most 4 inputs and
// outputs take the shallow kernel, compiled for each input and output width, which keeps a
// block of rows' inputs, outputs and output gradients in registers and streams the hidden
// units; every other shape takes the generic kernel, layer by layer with register-tiled
// products whose epilogues apply the bias and activation (forward), the activation
// derivative (input gradient, written over the activations it replaces) and the bias
// gradient (weight gradient). Both sum every gradient in the same order and give the same
// results. With narrow layers (2 -> 16 -> 2) a product is only a few multiply-adds per
// element, so memory traffic and loop overhead, not arithmetic, bound the generic kernel.
#if defined(__AVX512F__)
// GCC 12 warns about the undefined-value idiom inside the AVX-512 intrinsics' own headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#else
// Lane vectors are passed between inline functions (here and update_param) only: no ABI to
// keep.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include "backend/cpu/lanes_mlp.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "math/activations.h"
#include "math/losses.h"
#include "math/optimizers.h"

namespace tn {
namespace {

constexpr int L = kLanes;

// One lane vector: one float per member (kLanes). GCC's vector extension keeps accumulators
// in registers and lowers to AVX-512 (or AVX). Loads and stores go through memcpy
// (alignment-free, no aliasing UB).
typedef float Vec __attribute__((vector_size(L * sizeof(float))));
typedef std::int32_t IVec __attribute__((vector_size(L * sizeof(std::int32_t))));
typedef std::uint32_t UVec __attribute__((vector_size(L * sizeof(std::uint32_t))));
typedef double DVec __attribute__((vector_size(L * sizeof(double))));

#define TN_INLINE inline __attribute__((always_inline))
TN_INLINE Vec load(const float* p) { Vec v; std::memcpy(&v, p, sizeof v); return v; }
TN_INLINE void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
#if defined(__AVX512F__)
TN_INLINE Vec splat(float x) { return reinterpret_cast<Vec>(_mm512_set1_ps(x)); }
TN_INLINE IVec isplat(std::int32_t x) { return reinterpret_cast<IVec>(_mm512_set1_epi32(x)); }
#else
inline Vec splat(float x) {
  Vec v;
  for (int l = 0; l < L; ++l) v[l] = x;
  return v;
}
inline IVec isplat(std::int32_t x) { return IVec{} + x; }
#endif
TN_INLINE Vec select(IVec m, Vec a, Vec b) { return m ? a : b; }
// v, held in a register: keeps the compiler from folding a load that feeds several
// multiply-adds into each of them as a memory operand (one load per use).
TN_INLINE Vec in_register(Vec v) {
#if defined(__AVX512F__)
  __asm__("" : "+v"(v));
#endif
  return v;
}

TN_INLINE Vec vsqrt(Vec v) {
#if defined(__AVX512F__)
  return reinterpret_cast<Vec>(_mm512_sqrt_ps(reinterpret_cast<__m512>(v)));
#else
  for (int l = 0; l < L; ++l) v[l] = std::sqrt(v[l]);
  return v;
#endif
}

// fast_exp and fast_log (math/fastmath.h) on lane vectors: the same operations, lane by lane.
// Upper = false: for x ≤ 0 or NaN only, where the upper clamp changes nothing.
template <bool Upper = true>
TN_INLINE Vec vexp(Vec x) {
#if defined(__AVX512F__)
  // max(c, x) = c > x ? c : x and min(c, x) = c < x ? c : x, NaN passing through as below.
  __m512 xm = _mm512_max_ps(_mm512_set1_ps(-87.3f), reinterpret_cast<__m512>(x));
  if constexpr (Upper) xm = _mm512_min_ps(_mm512_set1_ps(88.3f), xm);
  const Vec xc = reinterpret_cast<Vec>(xm);
#else
  Vec xc = select(x < splat(-87.3f), splat(-87.3f), x);
  if constexpr (Upper) xc = select(xc > splat(88.3f), splat(88.3f), xc);
#endif
  const Vec shifted = xc * 1.44269504088896341f + 12582912.0f;
  const Vec n = shifted - 12582912.0f;
  const UVec ni = reinterpret_cast<UVec>(shifted) - 0x4B400000u;
  const Vec r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;
  Vec p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * reinterpret_cast<Vec>((ni + 127u) << 23);
}

// General = false: for finite x ≥ 1 or NaN only, where only the NaN case needs handling.
template <bool General = true>
TN_INLINE Vec vlog(Vec x) {
  const UVec u = reinterpret_cast<UVec>(x);
  Vec e = __builtin_convertvector(reinterpret_cast<IVec>((u >> 23) & 0xffu) - 126, Vec);
  Vec m = reinterpret_cast<Vec>((u & 0x807fffffu) | 0x3f000000u);
  const IVec small = m < splat(0.707106781186547524f);
  e = select(small, e - 1.0f, e);
  m = select(small, m + m - 1.0f, m - 1.0f);
  const Vec z = m * m;
  Vec p = splat(7.0376836292e-2f);
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  Vec y = m * z * p;
  y += -2.12194440e-4f * e;
  y += -0.5f * z;
  y = m + y + 0.693359375f * e;
  if constexpr (!General) return select(x != x, splat(NAN), y);
  y = select(x == splat(0.0f), splat(-INFINITY), y);
  y = select(x == splat(INFINITY), x, y);
  return select((x < splat(0.0f)) | (x != x), splat(NAN), y);
}

TN_INLINE Vec vneg_if(IVec m, Vec v) { return select(m, -v, v); }

// fast_tanh and fast_erf on lane vectors.
TN_INLINE Vec vtanh(Vec x) {
  const IVec neg = x < splat(0.0f);
  const Vec ax = vneg_if(neg, x);
  const Vec z = x * x;
  Vec p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const Vec small = p * z * x + x;
  Vec big = 1.0f - 2.0f / (vexp(2.0f * ax) + 1.0f);
  big = vneg_if(neg, big);
  return select(ax < splat(0.625f), small, big);
}

TN_INLINE Vec verf(Vec x) {
  const IVec neg = x < splat(0.0f);
  const Vec ax = vneg_if(neg, x);
  const Vec t = 1.0f / (1.0f + 0.3275911f * ax);
  Vec p = splat(1.061405429f);
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const Vec y = 1.0f - p * t * vexp(-ax * ax);
  return vneg_if(neg, y);
}

// act_forward and act_derivative (math/activations.h) on lane vectors.
template <Activation A>
TN_INLINE Vec vact(Vec z, Vec slope) {
  if constexpr (A == Activation::Identity) return z;
#if defined(__AVX512F__)
  // max(z, 0) returns its second operand when z is NaN or ±0: exactly z > 0 ? z : 0.
  if constexpr (A == Activation::Relu) return reinterpret_cast<Vec>(_mm512_max_ps(reinterpret_cast<__m512>(z), _mm512_setzero_ps()));
#else
  if constexpr (A == Activation::Relu) return select(z > Vec{}, z, Vec{});
#endif
  if constexpr (A == Activation::LeakyRelu) return select(z > Vec{}, z, slope * z);
  if constexpr (A == Activation::Tanh) return vtanh(z);
  if constexpr (A == Activation::Sigmoid) return 1.0f / (1.0f + vexp(-z));
  if constexpr (A == Activation::Gelu) return 0.5f * z * (1.0f + verf(z * 0.70710678118654752f));
}
// z may be a where the layer keeps no Z (relu: a > 0 exactly when z > 0; tanh and sigmoid
// read only a).
template <Activation A>
TN_INLINE Vec vderiv(Vec z, Vec a, Vec slope) {
  if constexpr (A == Activation::Identity) return splat(1.0f);
  if constexpr (A == Activation::Relu) return select(z > Vec{}, splat(1.0f), Vec{});
  if constexpr (A == Activation::LeakyRelu) return select(z > Vec{}, splat(1.0f), slope);
  if constexpr (A == Activation::Tanh) return 1.0f - a * a;
  if constexpr (A == Activation::Sigmoid) return a * (1.0f - a);
  if constexpr (A == Activation::Gelu) {
    const Vec cdf = 0.5f * (1.0f + verf(z * 0.70710678118654752f));
    const Vec pdf = 0.39894228040143268f * vexp(-0.5f * z * z);
    return cdf + z * pdf;
  }
}

// d·relu'(z) given a = relu(z), as a select: d where a > 0, else +0. Multiplying by the 0/1
// derivative would give −0 for negative d (and NaN for non-finite d, which only a member
// whose loss is already NaN can have); the select saves the multiply. a = relu(z) is +0 or
// positive (vact: max(z, 0) gives +0 for NaN and ±0), never negative or NaN, so a > 0
// exactly when its bits are nonzero, and the select is a mask of integer ops: 0 − bits is
// negative exactly then, its arithmetic shift by 31 all ones. On Zen 4 a compare into a
// mask register takes a multiply-add pipe for a cycle, as much as a multiply-add, while
// integer ops and logic run beside the multiply-adds (the shallow kernel's backward is
// bound by multiply-adds).
TN_INLINE Vec relu_backward(Vec d, Vec a) {
#if defined(__AVX512F__)
  const __m512i bits = _mm512_castps_si512(reinterpret_cast<__m512>(a));
  const __m512i keep = _mm512_srai_epi32(_mm512_sub_epi32(_mm512_setzero_si512(), bits), 31);
  return reinterpret_cast<Vec>(_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(reinterpret_cast<__m512>(d)), keep)));
#else
  return select(a > Vec{}, d, Vec{});
#endif
}

// ---- layout ----

// Activations whose derivative needs z besides a = f(z) keep Z apart from A; the others
// store only a (relu's derivative is read off a: a > 0 exactly when z > 0).
constexpr bool keeps_z(Activation a) { return a == Activation::LeakyRelu || a == Activation::Gelu; }

// Networks with one hidden layer, at most this many inputs and outputs and no output
// activation run the shallow kernel (below), compiled for each input and output width and
// hidden activation: on AVX-512 targets only, where its instantiations compile in seconds
// (lane vectors of AVX or SSE registers take the compiler minutes).
#if defined(__AVX512F__)
constexpr bool kShallowKernel = true;
#else
constexpr bool kShallowKernel = false;
#endif
constexpr int kShallowMaxIn = 4, kShallowMaxOut = 4;
// Gelu's erf and exp would double the kernel's code for a rarely used hidden activation.
constexpr bool shallow_activation(Activation a) { return a != Activation::Gelu; }
bool is_shallow(const ModelShape& s) {
  return kShallowKernel && s.layers.size() == 2 && shallow_activation(s.layers[0].act) &&
         s.layers[1].act == Activation::Identity && s.inputs() <= kShallowMaxIn && s.outputs() <= kShallowMaxOut;
}
// Rows the shallow kernel keeps in registers at once, and rows it gathers at once.
constexpr int kRowBlock = 4, kShallowChunk = 16;

// Rows of the batch that go through forward, loss and backward together (the generic
// kernel): while the parameters and gradients fit in L1 next to them (up to kResidentBytes),
// the chunk's activations get about kChunkBytes; otherwise the parameters stream from L2 for
// every chunk and the largest chunks amortize that best. Between 4 and 32 rows, a multiple
// of 4; results do not depend on it.
constexpr std::int64_t kChunkBytes = 12 << 10, kResidentBytes = 24 << 10;
constexpr int kMaxChunk = 32;

int chunk_rows(const ModelShape& s, int T, bool shallow) {
  if (shallow) return kShallowChunk;  // only inputs and targets are kept per row
  constexpr std::int64_t vec = L * static_cast<std::int64_t>(sizeof(float));
  if (2 * s.params_per_member() * vec > kResidentBytes) return kMaxChunk;
  std::int64_t v = s.inputs() + T + s.outputs();  // X, Y, dL/dA of the outputs
  for (const DenseLayer& l : s.layers) v += l.out * (keeps_z(l.act) ? 2 : 1);
  return static_cast<int>(std::clamp<std::int64_t>(kChunkBytes / (v * vec) / 4 * 4, 4, kMaxChunk));
}

// Offsets (in floats) of one lane group's arrays inside the worker's scratch. Parameters
// and gradients share one sub-layout: tensor t at tensor[t] (floats) inside each.
struct LaneLayout {
  int R = 0;                // rows per chunk
  bool shallow = false;
  std::int64_t params = 0;  // lane vectors per parameter block (floats per member)
  std::vector<std::int64_t> tensor;
  std::int64_t P = 0, G = 0, Gm = -1, X = 0, Y = 0, dOut = 0, Hb = -1, Zb = -1, total = 0;
  std::vector<std::int64_t> A, Z;  // generic kernel, per layer: [R][out]; Z == A unless keeps_z

  LaneLayout(const ModelShape& s, int B, int T, bool update, bool shallow_kernel)
      : R(std::min(B, chunk_rows(s, T, shallow_kernel))), shallow(shallow_kernel) {
    for (int t = 0; t < s.tensors(); ++t) {
      tensor.push_back(params * L);
      params += s.tensor_size(t);
    }
    auto take = [&](std::int64_t n) { const std::int64_t at = total; total += n * L; return at; };
    P = take(params);
    G = take(params);
    X = take(static_cast<std::int64_t>(R) * s.inputs());
    Y = take(static_cast<std::int64_t>(R) * T);
    if (shallow) {
      Hb = take(static_cast<std::int64_t>(s.layers[0].out) * R);  // per block of rows: [hidden][row]
      Zb = take(static_cast<std::int64_t>(R) * s.outputs());
      dOut = take(static_cast<std::int64_t>(R) * s.outputs());
    } else {
      for (const DenseLayer& l : s.layers) {
        A.push_back(take(static_cast<std::int64_t>(R) * l.out));
        Z.push_back(keeps_z(l.act) ? take(static_cast<std::int64_t>(R) * l.out) : A.back());
      }
      dOut = take(static_cast<std::int64_t>(R) * s.outputs());
    }
    if (update) Gm = take(params);  // the gradients in member rows, for the optimizer step
  }
  std::int64_t W(int li) const { return tensor[2 * li]; }
  std::int64_t b(int li) const { return tensor[2 * li + 1]; }
};

// ---- loss ----

// A lane group's per-lane loss constants and sums.
struct LossLanes {
  alignas(64) int valid[L];   // valid rows of each lane's batch
  alignas(64) float inv_b[L];  // 1 / valid
  alignas(64) double loss[L];
  alignas(64) double correct[L];
};

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

// Inputs and targets of batch rows [r0, r0 + rows) for the group's lanes. Unused lanes get
// lane 0's sample (finite data; their results are discarded). With a shared sample order
// every lane's row is the same: one broadcast per value.
void gather_rows(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, int r0, int rows) {
  const int F = fb.shape->inputs(), T = fb.targets;
  float* x = ws + lay.X;
  float* y = ws + lay.Y;
  const bool shared = fb.sampler->mode == SampleMode::Shared;
  for (int b = 0; b < rows; ++b) {
    const std::uint32_t pos = fb.pos0 + r0 + b;
    std::int64_t idx[L];
    idx[0] = fb.sampler->index(fb.member0 + g0, pos);
    if (shared) {
      const float* xs = fb.X + idx[0] * F;
      const float* ys = fb.Y + idx[0] * T;
      for (int f = 0; f < F; ++f) store(x + (static_cast<std::int64_t>(b) * F + f) * L, splat(xs[f]));
      for (int t = 0; t < T; ++t) store(y + (static_cast<std::int64_t>(b) * T + t) * L, splat(ys[t]));
      continue;
    }
    for (int l = 1; l < nm; ++l) idx[l] = fb.sampler->index(fb.member0 + g0 + l, pos);
    std::fill(idx + nm, idx + L, idx[0]);
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

// Covers a rows×cols result with tiles: 4×4 where possible, 8-row strips for the last 1-3
// columns, and single rows for the remainders (few tile shapes: every one is compiled for
// every epilogue). op.template run<RB, RC>(r0, c0).
template <int RB, int RC, class Op>
TN_INLINE void cover_rows(const Op& op, int r0, int rows, int c0) {
  for (; r0 + RB <= rows; r0 += RB) op.template run<RB, RC>(r0, c0);
  if constexpr (RB > 1)
    for (; r0 < rows; ++r0) op.template run<1, RC>(r0, c0);
}
template <class Op>
TN_INLINE void cover(const Op& op, int rows, int cols) {
  int c0 = 0;
  for (; c0 + 4 <= cols; c0 += 4) cover_rows<4, 4>(op, 0, rows, c0);
  switch (cols - c0) {
    case 3: cover_rows<8, 3>(op, 0, rows, c0); break;
    case 2: cover_rows<8, 2>(op, 0, rows, c0); break;
    case 1: cover_rows<8, 1>(op, 0, rows, c0); break;
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
        if constexpr (F == Activation::Identity) {
          store(A + at, acc[i][j]);
        } else if constexpr (F == Activation::Relu) {
          store(A + at, relu_backward(acc[i][j], load(A + at)));
        } else {
          const Vec a = keeps_z(F) ? Vec{} : load(A + at);
          const Vec z = keeps_z(F) ? load(Z + at) : a;
          store(A + at, acc[i][j] * vderiv<F>(z, a, slope));
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

void forward(const ModelShape& s, const LaneLayout& lay, float* ws, int rows) {
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
  }
}

// Backward from dL/dA of the outputs (in dOut): gradients added to G.
void backward(const ModelShape& s, const LaneLayout& lay, float* ws, int rows) {
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
    const float* in = li > 0 ? ws + lay.A[li - 1] : ws + lay.X;
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
      const InputGradOp<E> op{{dz, l.out, 1}, {ws + lay.P + lay.W(li), 1, l.out}, A, Z, l.in, l.out, splat(p.slope)};
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
  for (int r0 = 0; r0 < fb.B; r0 += lay.R) {
    const int rows = std::min(lay.R, fb.B - r0);
    gather_rows(fb, lay, ws, g0, nm, r0, rows);
    forward(s, lay, ws, rows);
    loss_rows(fb, ll, rows, r0, ws + lay.A.back(), ws + lay.Y, ws + lay.dOut);
    backward(s, lay, ws, rows);
  }
}

// ---- the shallow kernel: one hidden layer, inputs and outputs in registers ----

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
        const bool masked = xent_masked(xs, r0, n);
        blocks(n, [&]<int RB>(int rr) { forward<RB>(fb, lay, ws, H, rr, rowidx, slope, &xs, r0, masked); });
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

// ---- the optimizer step ----

// The first n ≤ 16 floats at p as a lane vector (the rest zero), and back.
TN_INLINE Vec load_n(const float* p, int n) {
#if defined(__AVX512F__)
  return reinterpret_cast<Vec>(_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p));
#else
  Vec v = Vec{};
  std::memcpy(&v, p, static_cast<std::size_t>(n) * sizeof(float));
  return v;
#endif
}
TN_INLINE void store_n(float* p, Vec v, int n) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), reinterpret_cast<__m512>(v));
#else
  std::memcpy(p, &v, static_cast<std::size_t>(n) * sizeof(float));
#endif
}

// update_param's square root on lane vectors (math/optimizers.h takes it as a parameter).
struct VecSqrt {
  TN_INLINE Vec operator()(Vec v) const { return vsqrt(v); }
};

// optimizer_update of one member's n parameters in place (gradients g, clipping factor k),
// L elements at a time through update_param on lane vectors, with the branch on k outside
// the loop as there (the compiler then contracts the same products into multiply-adds).
//
// The step scalars are copied first: through the reference, every store to p, s1 or s2 might
// change them (all floats), so the compiler recomputed update_param's loop-invariant step
// scalars (a scalar square root and two divisions, on the same unit as the vector ones)
// for every 16 parameters. The copy makes them invariant; the values are the same.
template <OptimizerType O, bool Scaled>
TN_INLINE void update_member_loop(std::int64_t n, float* p, const float* g, float* s1, float* s2, const OptStep& step,
                                  float k) {
  const OptStep h = step;
  for (std::int64_t k0 = 0; k0 < n; k0 += L) {
    const int w = static_cast<int>(std::min<std::int64_t>(L, n - k0));
    Vec pv = load_n(p + k0, w), s1v = load_n(s1 + k0, w);
    Vec s2v = s2 ? load_n(s2 + k0, w) : Vec{};
    if constexpr (Scaled) update_param<O, Vec, VecSqrt>(pv, load_n(g + k0, w) * k, s1v, s2v, h);
    else update_param<O, Vec, VecSqrt>(pv, load_n(g + k0, w), s1v, s2v, h);
    store_n(p + k0, pv, w);
    store_n(s1 + k0, s1v, w);
    if (s2) store_n(s2 + k0, s2v, w);
  }
}
template <OptimizerType O>
void update_member(std::int64_t n, float* p, const float* g, float* s1, float* s2, const OptStep& h, float k) {
  if (k != 1.0f) update_member_loop<O, true>(n, p, g, s1, s2, h, k);
  else update_member_loop<O, false>(n, p, g, s1, s2, h, k);
}

// Whether two members' step scalars are the same, bit for bit.
bool same_step(const OptStep& a, const OptStep& b) {
  static_assert(sizeof(OptStep) == 9 * sizeof(float) + 4, "compare every field of OptStep");
  const auto bits = [](float x) { return std::bit_cast<std::uint32_t>(x); };
  return bits(a.lr) == bits(b.lr) && bits(a.beta1) == bits(b.beta1) && bits(a.beta2) == bits(b.beta2) &&
         bits(a.eps) == bits(b.eps) && bits(a.weight_decay) == bits(b.weight_decay) &&
         bits(a.momentum) == bits(b.momentum) && bits(a.alpha) == bits(b.alpha) &&
         bits(a.bias_correction1) == bits(b.bias_correction1) && bits(a.bias_correction2) == bits(b.bias_correction2) &&
         a.nesterov == b.nesterov && a.skip == b.skip;
}

// The optimizer step of the group's members that take it: the gradients (in lanes, in G)
// go back to member rows in scratch (Gm), then each member's parameters and state are
// updated in place in the swarm arrays. The parameters were only read since they were put
// into lanes, so they need no copy back.
void update_group(const StepBatch& fb, const StepUpdate& up, const LaneLayout& lay, float* ws, int g0, int nm) {
  const ModelShape& s = *fb.shape;
  const float* G = ws + lay.G;
  float* Gm = ws + lay.Gm;
  float k[L];  // clipping factor of each lane
  std::fill(k, k + L, 1.0f);
  if (up.clip > 0.0f) {
    // Squared norms tensor by tensor in double, as sum_squares (the products are exact).
    DVec norm2 = DVec{};
    for (int t = 0; t < s.tensors(); ++t) {
      DVec acc = DVec{};
      const float* g = G + lay.tensor[t];
      for (std::int64_t i = 0; i < s.tensor_size(t); ++i) {
        const DVec d = __builtin_convertvector(load(g + i * L), DVec);
        acc += d * d;
      }
      norm2 += acc;
    }
    for (int l = 0; l < L; ++l) k[l] = clip_scale(up.clip, norm2[l]);
  }
  // Members with the same step scalars and clipping factor (the usual case: one schedule and
  // step count for all) update as one array per tensor: the block's rows are contiguous, so
  // no row tails and no masked stores and loads overlapping between neighbouring members'
  // short rows (which serialize the updates of biases).
  bool uniform = true;
  for (int l = 1; l < nm; ++l) uniform &= same_step(up.opt[g0 + l], up.opt[g0]) && k[l] == k[0];
  const bool two = optimizer_state_slots(up.type) == 2;
  dispatch_optimizer(up.type, [&]<OptimizerType O>() {
    for (int t = 0; t < s.tensors(); ++t) {
      const std::int64_t n = s.tensor_size(t);
      float* gm = Gm + lay.tensor[t];  // [16][n], member-major
      from_lanes(G + lay.tensor[t], n, nm, ~0u, gm);
      const std::int64_t at = g0 * n;
      float* s2 = two ? up.state2->t[t] + at : nullptr;
      if (uniform) {
        if (!up.opt[g0].skip)
          update_member<O>(nm * n, fb.params->t[t] + at, gm, up.state1->t[t] + at, s2, up.opt[g0], k[0]);
        continue;
      }
      for (int l = 0; l < nm; ++l) {
        const OptStep& h = up.opt[g0 + l];
        if (h.skip) continue;
        update_member<O>(n, fb.params->t[t] + at + l * n, gm + l * n, up.state1->t[t] + at + l * n,
                         s2 ? s2 + l * n : nullptr, h, k[l]);
      }
    }
  });
}

// ---- driver ----

// The worker's scratch, 64-byte aligned (every lane vector is one cache line).
float* scratch(std::int64_t floats) {
  thread_local std::vector<float> buf;
  const std::size_t need = static_cast<std::size_t>(floats) + 16;
  if (buf.size() < need) buf.resize(need);
  const auto at = reinterpret_cast<std::uintptr_t>(buf.data());
  return buf.data() + ((64 - at % 64) % 64) / sizeof(float);
}

// The layout for a call, kept per thread between calls with the same shape and batch (a
// trainer makes thousands of identical calls, each also asking lanes_scratch_bytes first;
// building a layout allocates).
const LaneLayout& layout_for(const ModelShape& s, int B, int T, bool update, bool shallow) {
  struct Cached {
    std::vector<DenseLayer> layers;
    int B, T;
    bool update, shallow;
    LaneLayout lay;
  };
  thread_local std::vector<Cached> cache;
  const auto same_layers = [&](const std::vector<DenseLayer>& a) {
    return a.size() == s.layers.size() &&
           std::equal(a.begin(), a.end(), s.layers.begin(), [](const DenseLayer& x, const DenseLayer& y) {
             return x.in == y.in && x.out == y.out && x.act == y.act && x.slope == y.slope;
           });
  };
  for (const Cached& c : cache)
    if (c.B == B && c.T == T && c.update == update && c.shallow == shallow && same_layers(c.layers)) return c.lay;
  if (cache.size() >= 8) cache.erase(cache.begin());
  cache.push_back(Cached{s.layers, B, T, update, shallow, LaneLayout(s, B, T, update, shallow)});
  return cache.back().lay;
}

void run_groups(const StepBatch& fb, const StepUpdate* up, bool allow_shallow) {
  const ModelShape& s = *fb.shape;
  const LaneLayout& lay = layout_for(s, fb.B, fb.targets, up != nullptr, allow_shallow && is_shallow(s));
  float* ws = scratch(lay.total);
  for (int g0 = 0; g0 < fb.S; g0 += L) {
    const int nm = std::min(L, fb.S - g0);
    for (int t = 0; t < s.tensors(); ++t) {
      const std::int64_t n = s.tensor_size(t);
      to_lanes(fb.params->t[t] + g0 * n, n, nm, ws + lay.P + lay.tensor[t]);
    }
    std::fill(ws + lay.G, ws + lay.G + lay.params * L, 0.0f);
    LossLanes ll;
    for (int l = 0; l < L; ++l) {
      ll.valid[l] = fb.rows && l < nm ? fb.rows[g0 + l] : fb.B;
      ll.inv_b[l] = 1.0f / static_cast<float>(ll.valid[l] > 0 ? ll.valid[l] : 1);
      ll.loss[l] = ll.correct[l] = 0.0;
    }
    if (lay.shallow) shallow_group(fb, lay, ws, g0, nm, ll);
    else generic_group(fb, lay, ws, g0, nm, ll);
    for (int l = 0; l < nm; ++l) {
      fb.loss_sum[g0 + l] += ll.loss[l];
      fb.correct[g0 + l] += ll.correct[l];
    }
    if (up) {
      update_group(fb, *up, lay, ws, g0, nm);
    } else {
      for (int t = 0; t < s.tensors(); ++t) {
        const std::int64_t n = s.tensor_size(t);
        from_lanes(ws + lay.G + lay.tensor[t], n, nm, ~0u, fb.grads->t[t] + g0 * n);
      }
    }
  }
}

#if defined(__AVX512F__)
// r[i] (row i of a 16×16 block) becomes column i.
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Per 128-bit lane j, r[4i + m] = rows 4i..4i+3 of column 4j + m.
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int m = 0; m < 4; ++m) {
    const __m512 a = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88), b = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xDD);
    const __m512 c = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88), d = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xDD);
    t[m] = _mm512_shuffle_f32x4(a, c, 0x88);
    t[8 + m] = _mm512_shuffle_f32x4(a, c, 0xDD);
    t[4 + m] = _mm512_shuffle_f32x4(b, d, 0x88);
    t[12 + m] = _mm512_shuffle_f32x4(b, d, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}
#endif

}  // namespace

void to_lanes(const float* src, std::int64_t n, int nm, float* dst) {
#if defined(__AVX512F__)
  static_assert(L == 16);
  for (std::int64_t k0 = 0; k0 < n; k0 += 16) {
    const int w = static_cast<int>(std::min<std::int64_t>(16, n - k0));
    const auto m = static_cast<__mmask16>((1u << w) - 1);
    __m512 r[16];
    for (int l = 0; l < 16; ++l) r[l] = l < nm ? _mm512_maskz_loadu_ps(m, src + l * n + k0) : _mm512_setzero_ps();
    transpose16(r);
    for (int j = 0; j < w; ++j) _mm512_storeu_ps(dst + (k0 + j) * L, r[j]);
  }
#else
  for (std::int64_t k = 0; k < n; ++k)
    for (int l = 0; l < L; ++l) dst[k * L + l] = l < nm ? src[l * n + k] : 0.0f;
#endif
}

void from_lanes(const float* src, std::int64_t n, int nm, std::uint32_t write, float* dst) {
#if defined(__AVX512F__)
  for (std::int64_t k0 = 0; k0 < n; k0 += 16) {
    const int w = static_cast<int>(std::min<std::int64_t>(16, n - k0));
    const auto m = static_cast<__mmask16>((1u << w) - 1);
    __m512 r[16];
    for (int j = 0; j < 16; ++j) r[j] = j < w ? _mm512_loadu_ps(src + (k0 + j) * L) : _mm512_setzero_ps();
    transpose16(r);
    for (int l = 0; l < nm; ++l)
      if (write >> l & 1) _mm512_mask_storeu_ps(dst + l * n + k0, m, r[l]);
  }
#else
  for (int l = 0; l < nm; ++l)
    if (write >> l & 1)
      for (std::int64_t k = 0; k < n; ++k) dst[l * n + k] = src[k * L + l];
#endif
}

std::int64_t lanes_scratch_bytes(const ModelShape& shape, int batch, int targets) {
  return layout_for(shape, batch, targets, false, is_shallow(shape)).total * static_cast<std::int64_t>(sizeof(float));
}

namespace {

class LaneStepKernel final : public StepKernel {
 public:
  explicit LaneStepKernel(bool shallow) : shallow_(shallow) {}
  std::string describe() const override {
    return std::string("fused step, members in SIMD lanes (") + std::to_string(L) + " per lane group, " +
           (shallow_ ? "one-hidden-layer kernel" : "layer-by-layer kernel") + ")";
  }
  int block_members() const override { return L; }
  void step(const StepBatch& b, const StepUpdate& up, int) override { run_groups(b, &up, true); }

 private:
  bool shallow_;
};

}  // namespace

std::unique_ptr<StepKernel> make_lane_step_kernel(const ModelShape& shape, int batch, std::int64_t scratch_budget,
                                                  std::string* why) {
  if (!shape.recurrent.empty()) {
    if (why) *why = "the lane kernel takes dense stacks only (the model has recurrent layers)";
    return nullptr;
  }
  const int targets = shape.outputs();  // upper bound on targets per sample
  const std::int64_t bytes = lanes_scratch_bytes(shape, batch, targets);
  if (bytes > scratch_budget) {
    if (why)
      *why = "a lane group's scratch would take " + std::to_string(bytes >> 10) + " KiB, above the lane kernel's " +
             std::to_string(scratch_budget >> 10) + " KiB (wide layers are faster with per-member GEMMs)";
    return nullptr;
  }
  return std::make_unique<LaneStepKernel>(is_shallow(shape));
}

void lanes_loss_grad(const StepBatch& fb) { run_groups(fb, nullptr, true); }

void lanes_step(const StepBatch& fb, const StepUpdate& up) { run_groups(fb, &up, true); }

void lanes_loss_grad_generic(const StepBatch& fb) { run_groups(fb, nullptr, false); }

void lanes_exp_log(const float* x, std::int64_t n, float* exp_all, float* exp_nonpos, float* log_all, float* log_ge1) {
  for (std::int64_t k = 0; k + L <= n; k += L) {
    const Vec v = load(x + k);
    store(exp_all + k, vexp<true>(v));
    store(exp_nonpos + k, vexp<false>(v));
    store(log_all + k, vlog<true>(v));
    store(log_ge1 + k, vlog<false>(v));
  }
}

}  // namespace tn
