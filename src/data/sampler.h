// Which training sample each member sees at each position of an epoch, computed (never
// stored per member) from the counter-based RNG. Usable on host and device.
#pragma once
#include <cstdint>

#include "math/hd.h"
#include "math/rng.h"

namespace tn {

enum class SampleMode : std::uint32_t { Shared = 0, Bootstrap = 1 };

// Member m's sample at position pos of the current epoch:
//   shared:    order[pos]
//   bootstrap: resample_m(order[pos]), resample_m(j) = uniform draw j of member m from [0, n)
// `order` is the epoch's permutation of positions (the same for all members; null means
// identity: no shuffling), so member m's batches depend only on (seed, m, epoch).
struct BatchSampler {
  SampleMode mode = SampleMode::Shared;
  std::uint64_t seed = 0;
  std::uint32_t n = 0;                    // training samples
  const std::uint32_t* order = nullptr;   // [n] or null

  TN_HD std::uint32_t position_to_draw(std::uint32_t pos) const { return order ? order[pos] : pos; }
  TN_HD std::uint32_t index(std::uint32_t member, std::uint32_t pos) const {
    const std::uint32_t j = position_to_draw(pos);
    if (mode == SampleMode::Shared) return j;
    return bootstrap_index(seed, member, j, n);
  }
  TN_HD static std::uint32_t bootstrap_index(std::uint64_t seed, std::uint32_t member,
                                             std::uint32_t draw, std::uint32_t n) {
    return uniform_below(random_words(seed, member, Purpose::Bootstrap, draw).v[0], n);
  }
};

// Fills out[0..n) with a permutation shared by all members: Fisher–Yates driven by the
// Philox counters (stream << 32 | i) of (seed, kSharedMember, purpose).
void random_permutation(std::uint64_t seed, Purpose purpose, std::uint32_t stream, std::uint32_t n,
                        std::uint32_t* out);

// The sample order of epoch `epoch`.
inline void epoch_order(std::uint64_t seed, std::uint32_t epoch, std::uint32_t n, std::uint32_t* order) {
  random_permutation(seed, Purpose::Shuffle, epoch, n, order);
}

}  // namespace tn
