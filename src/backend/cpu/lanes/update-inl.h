// The lane kernel's optimizer step: a lane group's gradients back to member rows in scratch,
// then each member's parameters and state updated in place (clipping included).
// Per-target code: included by backend/cpu/lanes_mlp.cpp once for every SIMD target
// (Highway's foreach_target), inside that target's namespace.
#if defined(TN_LANES_UPDATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_LANES_UPDATE_INL_H_
#undef TN_LANES_UPDATE_INL_H_
#else
#define TN_LANES_UPDATE_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "backend/cpu/lanes/layout-inl.h"
#include "backend/cpu/lanes/member_update-inl.h"
#include "backend/cpu/lanes/vec-inl.h"
#include "backend/step_kernel.h"
#include "math/optimizers.h"
HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

// ---- the optimizer step ----

// Whether two members' step scalars are the same, bit for bit.
bool same_step(const OptStep& a, const OptStep& b) {
  static_assert(sizeof(OptStep) == 10 * sizeof(float) + 4, "compare every field of OptStep");
  const auto bits = [](float x) { return std::bit_cast<std::uint32_t>(x); };
  return bits(a.lr) == bits(b.lr) && bits(a.beta1) == bits(b.beta1) && bits(a.beta2) == bits(b.beta2) &&
         bits(a.eps) == bits(b.eps) && bits(a.weight_decay) == bits(b.weight_decay) &&
         bits(a.momentum) == bits(b.momentum) && bits(a.alpha) == bits(b.alpha) &&
         bits(a.bias_correction1) == bits(b.bias_correction1) && bits(a.bias_correction2) == bits(b.bias_correction2) &&
         bits(a.l1) == bits(b.l1) && a.nesterov == b.nesterov && a.skip == b.skip;
}

// The optimizer step of the group's members that take it: the gradients (in lanes, in G)
// go back to member rows in scratch (Gm), then each member's parameters and state are
// updated in place in the swarm arrays. The parameters were only read since they were put
// into lanes, so they need no copy back.
void update_group(const StepBatch& fb, const StepUpdate& up, const LaneLayout& lay, float* ws, int g0, int nm) {
  const ModelShape& s = *fb.shape;
  // Divergence isolation, as Backend::freeze_diverged: the group's sums include this batch.
  if (up.frozen)
    for (int l = 0; l < nm; ++l)
      if (frozen_member(fb.loss_sum[g0 + l], up.frozen[g0 + l])) up.opt[g0 + l].skip = true;
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

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_UPDATE_INL_H_
