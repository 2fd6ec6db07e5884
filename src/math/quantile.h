// Quantiles as numpy's percentile computes them by default: linear interpolation between the
// order statistics of sorted values. Used for robust target scaling, per-group metric
// distributions, the report's member bands and TensorBoard's swarm summaries.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace tn {

// The q-quantile (q in [0, 1]) of `sorted` (increasing, not empty).
inline double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace tn
