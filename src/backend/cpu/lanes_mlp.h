// Fused forward + loss + backward (and optionally the optimizer step) for small MLPs with
// members in SIMD lanes (CPU), one compiled instance per SIMD target (cpu_target.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/cpu/cpu_target.h"
#include "backend/step_kernel.h"

namespace tn {

// The lane kernel of one target. Entry points run on the calling thread, lane group by lane
// group (`lanes` members each); a member's results do not depend on its lane, its neighbours
// or the lane count, and within a target they are bitwise reproducible.
struct LaneKernel {
  CpuTarget target;
  int lanes;  // members per lane group: the target's floats per vector register
  // Scratch bytes of one lane group's compute (interleaved parameters, gradients and the
  // activations of a row chunk); decides whether a shape takes the lane kernel.
  std::int64_t (*scratch_bytes)(const ModelShape& shape, int batch, int targets);
  // Whether the shape takes the one-hidden-layer kernel.
  bool (*is_shallow)(const ModelShape& shape);
  // Forward, loss and backward of a batch: fills fb.grads and adds to the loss sums (the
  // step kernel's first half, for tests).
  void (*loss_grad)(const StepBatch& fb);
  // loss_grad always by the generic layer-by-layer kernel, also for shapes the shallow
  // kernel takes. For tests.
  void (*loss_grad_generic)(const StepBatch& fb);
  // A whole step: loss_grad followed by the optimizer update of every tensor, without
  // storing the gradients (what the step kernel runs).
  void (*step)(const StepBatch& fb, const StepUpdate& up);
  // The kernel's exp and log on lane vectors, for tests (n a multiple of lanes): exp for any
  // x and for x ≤ 0 (or NaN), log for any x and for finite x ≥ 1 (or NaN). Each equals
  // fast_exp / fast_log (math/fastmath.h) on its domain.
  void (*exp_log)(const float* x, std::int64_t n, float* exp_all, float* exp_nonpos, float* log_all, float* log_ge1);
  // Transposes between a block's member-major tensor (member l's n floats at src + l·n) and
  // the lane layout (element k of lane l at [k·lanes + l]). For tests.
  // to_lanes: lanes nm..lanes-1 get zeros.
  void (*to_lanes)(const float* src, std::int64_t n, int nm, float* dst);
  // from_lanes: writes member l < nm only when bit l of `write` is set.
  void (*from_lanes)(const float* src, std::int64_t n, int nm, std::uint32_t write, float* dst);
};

// The lane kernel compiled for `t` (BackendError when this build has none).
const LaneKernel& lane_kernel(CpuTarget t);

// The lane kernel of `target` as a step kernel (lanes members per block) for a shape it
// takes: a dense stack whose lane-group scratch fits `scratch_budget` bytes. Null otherwise,
// with *why.
std::unique_ptr<StepKernel> make_lane_step_kernel(CpuTarget target, const ModelShape& shape, int batch,
                                                  std::int64_t scratch_budget, std::string* why);

}  // namespace tn
