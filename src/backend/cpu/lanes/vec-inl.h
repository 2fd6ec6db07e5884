// Lane vectors: one float per member, as wide as the target's vector registers, and the
// math the lane kernel does on them (exp, log, tanh, erf, activations and their derivatives),
// and masked loads and stores.
// Per-target code: included by backend/cpu/lanes_mlp.cpp once for every SIMD target
// (Highway's foreach_target), inside that target's namespace.
#if defined(TN_LANES_VEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_LANES_VEC_INL_H_
#undef TN_LANES_VEC_INL_H_
#else
#define TN_LANES_VEC_INL_H_
#endif

#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "backend/cpu/target-inl.h"
#include "math/activations.h"
#include "math/fastmath.h"
HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// The portable fallback (TN_GENERIC_TARGET, target-inl.h) has lane vectors of 4 floats,
// which the compiler lowers to what the baseline has (SSE2 on x86-64); it takes no Highway op.

// Members per lane group: one vector register of floats of the target (16 on AVX-512, 8 on
// AVX2, 4 on NEON and the generic target). A member's results do not depend on it.
constexpr int L = TN_GENERIC_TARGET ? 4 : HWY_LANES(float);

// One lane vector: one float per member. The arithmetic is written once on GCC/Clang vector
// extensions (operators with scalar broadcast, in the order written: rounding is the same on
// every target but for fused multiply-adds), which lower to the target's registers; the few
// operations without an operator (square root) go through Highway's ops. Loads and stores go
// through memcpy (alignment-free, no aliasing UB).
typedef float Vec __attribute__((vector_size(L * sizeof(float))));
typedef std::int32_t IVec __attribute__((vector_size(L * sizeof(std::int32_t))));
typedef std::uint32_t UVec __attribute__((vector_size(L * sizeof(std::uint32_t))));
typedef double DVec __attribute__((vector_size(L * sizeof(double))));

#define TN_INLINE inline __attribute__((always_inline))
#if !TN_GENERIC_TARGET
// Our vector as Highway's (the same register), for the few ops taken from Highway.
TN_INLINE auto to_hwy(Vec v) {
  decltype(hn::Zero(hn::FixedTag<float, L>())) h;
  h.raw = reinterpret_cast<decltype(h.raw)>(v);
  return h;
}
#endif
TN_INLINE Vec load(const float* p) { Vec v; std::memcpy(&v, p, sizeof v); return v; }
TN_INLINE void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
#if HWY_TARGET == HWY_AVX3
TN_INLINE Vec splat(float x) { return reinterpret_cast<Vec>(_mm512_set1_ps(x)); }
TN_INLINE IVec isplat(std::int32_t x) { return reinterpret_cast<IVec>(_mm512_set1_epi32(x)); }
#elif !TN_GENERIC_TARGET
// Highway's broadcast (one instruction), its raw register reinterpreted as our vector type.
TN_INLINE Vec splat(float x) { return reinterpret_cast<Vec>(hn::Set(hn::FixedTag<float, L>(), x).raw); }
TN_INLINE IVec isplat(std::int32_t x) {
  return reinterpret_cast<IVec>(hn::Set(hn::FixedTag<std::int32_t, L>(), x).raw);
}
#else
// A broadcast: {x, x, ..., x} (a loop of lane stores compiled to as many scalar moves).
template <class V, class T>
TN_INLINE V broadcast(T x) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) { return V{((void)I, x)...}; }(std::make_index_sequence<L>());
}
TN_INLINE Vec splat(float x) { return broadcast<Vec>(x); }
TN_INLINE IVec isplat(std::int32_t x) { return broadcast<IVec>(x); }
#endif
TN_INLINE Vec select(IVec m, Vec a, Vec b) { return m ? a : b; }
// v, held in a register: keeps the compiler from folding a load that feeds several
// multiply-adds into each of them as a memory operand (one load per use).
TN_INLINE Vec in_register(Vec v) {
#if HWY_TARGET == HWY_AVX3
  __asm__("" : "+v"(v));
#elif HWY_TARGET == HWY_AVX2
  __asm__("" : "+x"(v));
#elif HWY_TARGET == HWY_NEON
  __asm__("" : "+w"(v));
#endif
  return v;
}

TN_INLINE Vec vsqrt(Vec v) {
#if HWY_TARGET == HWY_AVX3
  return reinterpret_cast<Vec>(_mm512_sqrt_ps(reinterpret_cast<__m512>(v)));
#elif TN_GENERIC_TARGET
  for (int l = 0; l < L; ++l) v[l] = std::sqrt(v[l]);
  return v;
#else
  return reinterpret_cast<Vec>(hn::Sqrt(to_hwy(v)).raw);
#endif
}

// The operations math/fastmath.h's polynomials need, on lane vectors: with them, vexp, vlog,
// vtanh and verf are fast_exp, fast_log, fast_tanh and fast_erf, the same operations lane by
// lane.
struct VecOps {
  static TN_INLINE Vec splat(float x) { return ::tn::HWY_NAMESPACE::splat(x); }
  static TN_INLINE Vec select(IVec m, Vec a, Vec b) { return m ? a : b; }
  static TN_INLINE UVec bits(Vec v) { return reinterpret_cast<UVec>(v); }
  static TN_INLINE Vec from_bits(UVec u) { return reinterpret_cast<Vec>(u); }
  static TN_INLINE IVec as_int(UVec u) { return reinterpret_cast<IVec>(u); }
  static TN_INLINE Vec to_float(IVec i) { return __builtin_convertvector(i, Vec); }
#if HWY_TARGET == HWY_AVX3
  // max(c, x) = c > x ? c : x and min(c, x) = c < x ? c : x, NaN passing through as in FloatOps.
  static TN_INLINE Vec at_least(Vec x, float c) {
    return reinterpret_cast<Vec>(_mm512_max_ps(_mm512_set1_ps(c), reinterpret_cast<__m512>(x)));
  }
  static TN_INLINE Vec at_most(Vec x, float c) {
    return reinterpret_cast<Vec>(_mm512_min_ps(_mm512_set1_ps(c), reinterpret_cast<__m512>(x)));
  }
#else
  static TN_INLINE Vec at_least(Vec x, float c) { return select(x < splat(c), splat(c), x); }
  static TN_INLINE Vec at_most(Vec x, float c) { return select(x > splat(c), splat(c), x); }
#endif
};

#include "math/fastmath_poly.inc"  // exp_poly, log_poly, tanh_poly, erf_poly for this target

template <bool Upper = true>
TN_INLINE Vec vexp(Vec x) { return exp_poly<Vec, VecOps, Upper>(x); }
template <bool General = true>
TN_INLINE Vec vlog(Vec x) { return log_poly<Vec, VecOps, General>(x); }
TN_INLINE Vec vtanh(Vec x) { return tanh_poly<Vec, VecOps>(x); }
TN_INLINE Vec verf(Vec x) { return erf_poly<Vec, VecOps>(x); }

// act_forward and act_derivative (math/activations.h) on lane vectors.
template <Activation A>
TN_INLINE Vec vact(Vec z, Vec slope) {
  if constexpr (A == Activation::Identity) return z;
#if HWY_TARGET == HWY_AVX3
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
#if HWY_TARGET == HWY_AVX3
  const __m512i bits = _mm512_castps_si512(reinterpret_cast<__m512>(a));
  const __m512i keep = _mm512_srai_epi32(_mm512_sub_epi32(_mm512_setzero_si512(), bits), 31);
  return reinterpret_cast<Vec>(_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(reinterpret_cast<__m512>(d)), keep)));
#else
  return select(a > Vec{}, d, Vec{});
#endif
}

// The first n ≤ L floats at p as a lane vector (the rest zero), and back.
// AVX-512 and AVX2 have masked loads and stores (which touch no memory outside the mask);
// elsewhere a whole vector is a plain load or store and only a tail goes through memcpy.
TN_INLINE Vec load_n(const float* p, int n) {
#if HWY_TARGET == HWY_AVX3
  return reinterpret_cast<Vec>(_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p));
#elif HWY_TARGET == HWY_AVX2
  const hn::FixedTag<float, L> d;
  return reinterpret_cast<Vec>(hn::MaskedLoad(hn::FirstN(d, static_cast<std::size_t>(n)), d, p).raw);
#else
  if (n == L) return load(p);
  Vec v = Vec{};
  std::memcpy(&v, p, static_cast<std::size_t>(n) * sizeof(float));
  return v;
#endif
}
TN_INLINE void store_n(float* p, Vec v, int n) {
#if HWY_TARGET == HWY_AVX3
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), reinterpret_cast<__m512>(v));
#elif HWY_TARGET == HWY_AVX2
  const hn::FixedTag<float, L> d;
  hn::BlendedStore(to_hwy(v), hn::FirstN(d, static_cast<std::size_t>(n)), d, p);
#else
  if (n == L) return store(p, v);
  std::memcpy(p, &v, static_cast<std::size_t>(n) * sizeof(float));
#endif
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_VEC_INL_H_
