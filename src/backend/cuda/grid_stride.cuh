// The CUDA backend's generic launcher: a grid-stride loop calling a functor once per work
// item (functors do for one item what the CPU backend's loop body does).
#pragma once
#include <cstdint>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/launch_grid.h"

namespace tn {

template <class F>
__global__ void __launch_bounds__(kLaunchThreads) grid_stride(std::int64_t n, F f) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) f(i);
}

template <class F>
void launch(void* stream, int sm_count, std::int64_t n, const F& f) {
  const LaunchGrid g = grid_for(n, sm_count);
  if (g.blocks == 0) return;
  grid_stride<<<g.blocks, g.threads, 0, static_cast<cudaStream_t>(stream)>>>(n, f);
  TN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tn
