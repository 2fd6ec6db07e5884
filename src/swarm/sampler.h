// Which training sample each member sees at each position of an epoch, computed from the
// counter-based RNG (resamples and shuffles are never stored per member). Host and device.
#pragma once
#include <cstdint>

#include "math/host_device.h"
#include "math/rng.h"

namespace tn {

// Shared, Bootstrap and Subsample give every member a set of the same size m; Sets (shards,
// group_by) gives member k its own rows, whose epoch order the trainer lays out per block.
enum class SampleMode : std::uint32_t { Shared = 0, Bootstrap = 1, Subsample = 2, Sets = 3 };

// Member k's sample at position pos (0 ≤ pos < its set size) of the current epoch:
//   shared:    order[pos]
//   bootstrap: draw_k(order[pos]), draw_k(j) = uniform draw j of member k from [0, n)
//   subsample: perm_k(order[pos]), perm_k a keyed permutation of [0, n) (the first m of it)
//   sets:      table[(k − table_member0)·table_stride + pos]
// `order` is the epoch's permutation of [0, m), the same for all members (null: identity,
// no shuffling), so member k's batches depend only on (seed, k, epoch).
struct BatchSampler {
  SampleMode mode = SampleMode::Shared;
  std::uint64_t seed = 0;
  std::uint32_t n = 0;                   // training samples
  const std::uint32_t* order = nullptr;  // [m] or null
  // sets mode: the block's per-member epoch orders, already mapped to sample rows
  const std::uint32_t* table = nullptr;
  std::uint32_t table_member0 = 0;
  std::uint32_t table_stride = 0;

  TN_HD std::uint32_t index(std::uint32_t member, std::uint32_t pos) const {
    if (mode == SampleMode::Sets) return table[(member - table_member0) * table_stride + pos];
    const std::uint32_t j = order ? order[pos] : pos;
    if (mode == SampleMode::Shared) return j;
    if (mode == SampleMode::Bootstrap) return bootstrap_index(seed, member, j, n);
    return subsample_index(seed, member, j, n);
  }
  TN_HD static std::uint32_t bootstrap_index(std::uint64_t seed, std::uint32_t member,
                                             std::uint32_t draw, std::uint32_t n) {
    return uniform_below(random_words(seed, member, Purpose::Bootstrap, draw).v[0], n);
  }
  TN_HD static std::uint32_t subsample_index(std::uint64_t seed, std::uint32_t member,
                                             std::uint32_t j, std::uint32_t n) {
    return keyed_permutation(random_words(seed, member, Purpose::Subsample, 0), j, n);
  }
};

// Fills out[0..n) with a permutation shared by all members: Fisher–Yates driven by the
// Philox counters (stream << 32 | i) of (seed, kSharedMember, purpose).
void random_permutation(std::uint64_t seed, Purpose purpose, std::uint32_t stream, std::uint32_t n,
                        std::uint32_t* out);

// The sample order of epoch `epoch` over n positions.
inline void epoch_order(std::uint64_t seed, std::uint32_t epoch, std::uint32_t n, std::uint32_t* order) {
  random_permutation(seed, Purpose::Shuffle, epoch, n, order);
}

}  // namespace tn
