// Helpers for tests that compare trained members: one member's slice of a swarm array.
#pragma once
#include <vector>

#include "train/trainer.h"

namespace tn::test {

// Member s's values of a layout-ordered swarm array (t.params by default), tensor by tensor:
// what a swarm of one would hold.
inline std::vector<float> member_params(const TrainOutput& t, const std::vector<float>& p, int s) {
  std::vector<float> r;
  for (std::size_t i = 0; i < t.layout.size.size(); ++i) {
    const float* base = p.data() + t.layout.at(static_cast<int>(i), s);
    r.insert(r.end(), base, base + t.layout.size[i]);
  }
  return r;
}
inline std::vector<float> member_params(const TrainOutput& t, int s) { return member_params(t, t.params, s); }

}  // namespace tn::test
