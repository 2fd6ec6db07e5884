// The CPU's fused kernel for small MLPs: members side by side in SIMD lanes (16 on AVX-512,
// 8 on AVX2, 4 on NEON). Every array of a lane group is stored [..., lanes] with the member
// innermost, so every matrix product and
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
//
// The kernel is written once and compiled for every SIMD target (Google Highway's
// foreach_target re-includes this file once per target, each time inside that target's
// namespace with its instruction set enabled); cpu_target.h picks the target at run time.
// Its parts, one concept a file, are in lanes/: vec-inl.h (lane vectors and their math),
// layout-inl.h (scratch layout, transposes and row gathering), loss-inl.h, generic-inl.h
// (any dense stack), shallow-inl.h (one hidden layer), update-inl.h (the optimizer step)
// with member_update-inl.h (one member's update, which the separate optimizer op runs too);
// this file drives them and exports one LaneKernel table per target.

// Lane vectors are passed between inline functions only: no ABI to keep. GCC 12 warns about
// the undefined-value idiom inside the AVX-512 intrinsics' own headers.
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backend/cpu/lanes_mlp.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/lanes/generic-inl.h"
#include "backend/cpu/lanes/layout-inl.h"
#include "backend/cpu/lanes/loss-inl.h"
#include "backend/cpu/lanes/shallow-inl.h"
#include "backend/cpu/lanes/update-inl.h"
#include "backend/cpu/lanes/vec-inl.h"
#include "backend/cpu/lanes_mlp.h"
#include "backend/cpu/target-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

static_assert(L <= 32, "from_lanes' write mask has 32 bits");

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
             return x.in == y.in && x.out == y.out && x.act == y.act && x.slope == y.slope && x.dropout == y.dropout;
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

std::int64_t scratch_bytes(const ModelShape& shape, int batch, int targets) {
  return layout_for(shape, batch, targets, false, is_shallow(shape)).total * static_cast<std::int64_t>(sizeof(float));
}
void loss_grad(const StepBatch& fb) { run_groups(fb, nullptr, true); }
void loss_grad_generic(const StepBatch& fb) { run_groups(fb, nullptr, false); }
void step(const StepBatch& fb, const StepUpdate& up) { run_groups(fb, &up, true); }

void exp_log(const float* x, std::int64_t n, float* exp_all, float* exp_nonpos, float* log_all, float* log_ge1) {
  for (std::int64_t k = 0; k + L <= n; k += L) {
    const Vec v = load(x + k);
    store(exp_all + k, vexp<true>(v));
    store(exp_nonpos + k, vexp<false>(v));
    store(log_all + k, vlog<true>(v));
    store(log_ge1 + k, vlog<false>(v));
  }
}

}  // namespace

const LaneKernel kLaneKernel{kTarget,   L,    &scratch_bytes, &is_shallow, &loss_grad, &loss_grad_generic,
                             &step,     &exp_log, &to_lanes, &from_lanes};

}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "backend/cpu/target_cases.h"

namespace tn {

const LaneKernel& lane_kernel(CpuTarget t) {
  switch (t) {
    TN_TARGET_CASES(kLaneKernel)
    default: break;
  }
  target_not_compiled(t);
}

namespace {

class LaneStepKernel final : public StepKernel {
 public:
  LaneStepKernel(const LaneKernel& k, bool shallow) : k_(k), shallow_(shallow) {}
  std::string describe() const override {
    return std::string("fused step, members in SIMD lanes (") + to_string(k_.target) + ", " +
           std::to_string(k_.lanes) + " per lane group, " +
           (shallow_ ? "one-hidden-layer kernel" : "layer-by-layer kernel") + ")";
  }
  int block_members() const override { return k_.lanes; }
  void step(const StepBatch& b, const StepUpdate& up, int) override { k_.step(b, up); }

 private:
  const LaneKernel& k_;
  bool shallow_;
};

}  // namespace

std::unique_ptr<StepKernel> make_lane_step_kernel(CpuTarget target, const ModelShape& shape, int batch,
                                                  std::int64_t scratch_budget, std::string* why) {
  if (!shape.recurrent.empty()) {
    if (why) *why = "the lane kernel takes dense stacks only (the model has recurrent layers)";
    return nullptr;
  }
  const LaneKernel& k = lane_kernel(target);
  const int targets = shape.outputs();  // upper bound on targets per sample
  const std::int64_t bytes = k.scratch_bytes(shape, batch, targets);
  if (bytes > scratch_budget) {
    if (why)
      *why = "a lane group's scratch would take " + std::to_string(bytes >> 10) + " KiB, above the lane kernel's " +
             std::to_string(scratch_budget >> 10) + " KiB (wide layers are faster with per-member GEMMs)";
    return nullptr;
  }
  return std::make_unique<LaneStepKernel>(k, k.is_shallow(shape));
}

}  // namespace tn
#endif  // HWY_ONCE
