// Fused forward + loss + backward for small MLPs with members in SIMD lanes (CPU).
#pragma once
#include <cstdint>

#include "backend/backend.h"

namespace tn {

inline constexpr int kLanes = 16;  // members per lane group: one AVX-512 register of floats

// Scratch bytes of one lane group (interleaved parameters, gradients, activations).
std::int64_t lanes_scratch_bytes(const MlpShape& shape, int batch, int targets);

// Backend::fused_loss_grad on the calling thread, lane group by lane group.
void lanes_loss_grad(const FusedBatch& fb);

}  // namespace tn
