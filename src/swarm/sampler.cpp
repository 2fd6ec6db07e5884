// Permutations shared by all members (epoch order, dataset split).
#include "swarm/sampler.h"

namespace tn {

void random_permutation(std::uint64_t seed, Purpose purpose, std::uint32_t stream, std::uint32_t n,
                        std::uint32_t* order) {
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  for (std::uint32_t i = n; i > 1; --i) {
    const std::uint64_t ctr = (static_cast<std::uint64_t>(stream) << 32) | i;
    const std::uint32_t j = uniform_below(random_words(seed, kSharedMember, purpose, ctr).v[0], i);
    const std::uint32_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
}

}  // namespace tn
