// Fused forward + loss + backward (and optionally the optimizer step) for small MLPs with
// members in SIMD lanes (CPU).
#pragma once
#include <cstdint>

#include "backend/backend.h"

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

// Backend::fused_loss_grad on the calling thread, lane group by lane group.
void lanes_loss_grad(const FusedBatch& fb);

// Backend::fused_step on the calling thread: lanes_loss_grad followed by the optimizer
// update of every tensor, without storing the gradients.
void lanes_step(const FusedBatch& fb, const FusedUpdate& up);

// lanes_loss_grad always by the generic layer-by-layer kernel, also for shapes the
// shallow (one hidden layer) kernel takes. For tests.
void lanes_loss_grad_generic(const FusedBatch& fb);

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
