// One member's optimizer step on lane vectors: update_param (math/optimizers.h) over L
// parameters at a time, in place. The fused lane kernel's update and the separate optimizer
// op (ops/dense.cpp) both run it, so the two give the same bits on every target: left to
// the compiler, the op's plain loop stayed scalar on AVX2 (the sign of l1's term and the
// square root kept GCC 12 from vectorizing it there) and took 86% of W3's step.
// Per-target code: included once for every SIMD target (Highway's foreach_target), inside
// that target's namespace.
#if defined(TN_LANES_MEMBER_UPDATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_LANES_MEMBER_UPDATE_INL_H_
#undef TN_LANES_MEMBER_UPDATE_INL_H_
#else
#define TN_LANES_MEMBER_UPDATE_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

#include "backend/cpu/lanes/vec-inl.h"
#include "math/optimizers.h"
HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

// update_param's square root on lane vectors (math/optimizers.h takes it as a parameter).
struct VecSqrt {
  Vec operator()(Vec v) const { return vsqrt(v); }
  Vec sign(Vec v) const { return select(v > 0.0f, splat(1.0f), select(v < 0.0f, splat(-1.0f), Vec{})); }  // (called from math/optimizers.h: no always_inline across targets)
};

// optimizer_update of one member's n parameters in place (gradients g, clipping factor k),
// L elements at a time through update_param on lane vectors, with the branch on k outside
// the loop as there (the compiler then contracts the same products into multiply-adds).
//
// The step scalars are copied first: through the reference, every store to p, s1 or s2 might
// change them (all floats), so the compiler recomputed update_param's loop-invariant step
// scalars (a scalar square root and two divisions, on the same unit as the vector ones)
// for every 16 parameters. The copy makes them invariant; the values are the same.
//
// Whole vectors are plain loads and stores, and only the last w < L elements go through
// load_n/store_n: on AVX2 a masked store (vmaskmovps) costs several times a plain one on AMD
// cores, and it was a fifth of W1's update time when every vector took it.
template <OptimizerType O, bool Scaled, bool Whole>
TN_INLINE void update_vector(float* p, const float* g, float* s1, float* s2, const OptStep& h, float k, int w) {
  const auto in = [w](const float* q) { return Whole ? load(q) : load_n(q, w); };
  const auto out = [w](float* q, Vec v) {
    if constexpr (Whole) store(q, v);
    else store_n(q, v, w);
  };
  Vec pv = in(p), s1v = in(s1);
  Vec s2v = s2 ? in(s2) : Vec{};
  if constexpr (Scaled) update_param<O, Vec, VecSqrt>(pv, in(g) * k, s1v, s2v, h);
  else update_param<O, Vec, VecSqrt>(pv, in(g), s1v, s2v, h);
  out(p, pv);
  out(s1, s1v);
  if (s2) out(s2, s2v);
}
template <OptimizerType O, bool Scaled>
TN_INLINE void update_member_loop(std::int64_t n, float* p, const float* g, float* s1, float* s2, const OptStep& step,
                                  float k) {
  const OptStep h = step;
  std::int64_t k0 = 0;
  for (; k0 + L <= n; k0 += L)
    update_vector<O, Scaled, true>(p + k0, g + k0, s1 + k0, s2 ? s2 + k0 : nullptr, h, k, L);
  if (k0 < n)
    update_vector<O, Scaled, false>(p + k0, g + k0, s1 + k0, s2 ? s2 + k0 : nullptr, h, k, static_cast<int>(n - k0));
}
template <OptimizerType O>
void update_member(std::int64_t n, float* p, const float* g, float* s1, float* s2, const OptStep& h, float k) {
  if (k != 1.0f) update_member_loop<O, true>(n, p, g, s1, s2, h, k);
  else update_member_loop<O, false>(n, p, g, s1, s2, h, k);
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_MEMBER_UPDATE_INL_H_
