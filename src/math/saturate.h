// Size arithmetic that cannot overflow: sums and products of non-negative sizes (element
// counts, bytes) that stop at kSaturated instead of wrapping around. A saturated size is
// larger than any machine's memory, so whatever compares it with a limit refuses it.
#pragma once
#include <cstdint>
#include <limits>

namespace tn {

inline constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

// a + b for a, b >= 0 (a negative operand is taken as 0), at most kSaturated.
constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  a = a < 0 ? 0 : a;
  b = b < 0 ? 0 : b;
  return a > kSaturated - b ? kSaturated : a + b;
}

// a · b for a, b >= 0 (a negative operand is taken as 0), at most kSaturated.
constexpr std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  a = a < 0 ? 0 : a;
  b = b < 0 ? 0 : b;
  return a != 0 && b > kSaturated / a ? kSaturated : a * b;
}

template <class... Rest>
constexpr std::int64_t sat_mul(std::int64_t a, std::int64_t b, Rest... rest) {
  return sat_mul(sat_mul(a, b), static_cast<std::int64_t>(rest)...);
}

}  // namespace tn
