// Grid sizes of the CUDA backend's grid-stride launcher: plain host code, so the choice is
// unit-tested on machines without a GPU (tests/test_cuda_planner.cpp).
#pragma once
#include <algorithm>
#include <cstdint>

namespace tn {

struct LaunchGrid {
  int blocks = 0;   // 0: nothing to launch (n <= 0)
  int threads = 0;  // per block
};

inline constexpr int kLaunchThreads = 256;
// Enough blocks to fill every SM several times over; beyond that each thread strides.
inline constexpr int kBlocksPerSm = 8;

// Blocks for n work items with `threads` per block: ceil(n / threads), at least 1 and at
// most kBlocksPerSm · sm_count (the kernel's grid-stride loop covers the rest), and never
// above the 2^31 − 1 limit of gridDim.x.
inline LaunchGrid grid_for(std::int64_t n, int sm_count, int threads = kLaunchThreads) {
  if (n <= 0) return {};
  threads = std::max(32, threads);
  const std::int64_t needed = (n + threads - 1) / threads;
  const std::int64_t cap = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::max(1, sm_count)) * kBlocksPerSm);
  const std::int64_t blocks = std::min<std::int64_t>({needed, cap, 2147483647LL});
  return {static_cast<int>(blocks), threads};
}

// Items each thread handles in the grid-stride loop (the last thread may do one fewer).
inline std::int64_t items_per_thread(std::int64_t n, const LaunchGrid& g) {
  if (g.blocks == 0) return 0;
  const std::int64_t total = static_cast<std::int64_t>(g.blocks) * g.threads;
  return (n + total - 1) / total;
}

}  // namespace tn
