// Fused forward + loss + backward (and optionally the optimizer step) for small MLPs with
// members in SIMD lanes (CPU).
#pragma once
#include <cstdint>

#include <memory>

#include "backend/backend.h"
#include "backend/step_kernel.h"

namespace tn {

// Members per lane group: one AVX-512 register of floats, or on other targets one AVX
// register (the kernel's lane vectors are then native there, which also keeps compile times
// reasonable). A member's results do not depend on the lane count.
#if defined(__AVX512F__)
inline constexpr int kLanes = 16;
#else
inline constexpr int kLanes = 8;
#endif

// Scratch bytes of one lane group's compute (interleaved parameters, gradients and the
// activations of a row chunk); decides whether a shape takes the lane kernel.
std::int64_t lanes_scratch_bytes(const ModelShape& shape, int batch, int targets);

// The lane kernel as a step kernel (kLanes members per block) for a shape it takes: a dense
// stack whose lane-group scratch fits `scratch_budget` bytes. Null otherwise, with *why.
std::unique_ptr<StepKernel> make_lane_step_kernel(const ModelShape& shape, int batch,
                                                  std::int64_t scratch_budget, std::string* why);

// Forward, loss and backward of a batch on the calling thread, lane group by lane group:
// fills fb.grads and adds to the loss sums (the step kernel's first half, for tests).
void lanes_loss_grad(const StepBatch& fb);

// A whole step on the calling thread: lanes_loss_grad followed by the optimizer update of
// every tensor, without storing the gradients (what the step kernel runs).
void lanes_step(const StepBatch& fb, const StepUpdate& up);

// lanes_loss_grad always by the generic layer-by-layer kernel, also for shapes the
// shallow (one hidden layer) kernel takes. For tests.
void lanes_loss_grad_generic(const StepBatch& fb);

// The kernel's exp and log on lane vectors, for tests (n a multiple of kLanes): exp for any
// x and for x ≤ 0 (or NaN), log for any x and for finite x ≥ 1 (or NaN). Each equals fast_exp /
// fast_log (math/fastmath.h) on its domain.
void lanes_exp_log(const float* x, std::int64_t n, float* exp_all, float* exp_nonpos, float* log_all, float* log_ge1);

// Transposes between a block's member-major tensor (member l's n floats at src + l·n) and
// the lane layout (element k of lane l at [k·kLanes + l]). Exposed for tests.
// to_lanes: lanes nm..kLanes-1 get zeros.
void to_lanes(const float* src, std::int64_t n, int nm, float* dst);
// from_lanes: writes member l < nm only when bit l of `write` is set.
void from_lanes(const float* src, std::int64_t n, int nm, std::uint32_t write, float* dst);

}  // namespace tn
