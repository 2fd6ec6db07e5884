// Inverted dropout masks, identical on host and device: whether element (row, unit) of a dense
// layer's output is kept is a pure function of (seed, member, epoch, the row's position in the
// epoch, layer, unit), so member k's masks do not depend on the other members, the block, the
// thread or the device. Kept elements are scaled by 1 / (1 − rate) (PyTorch's Dropout).
#pragma once
#include <cstdint>

#include "math/host_device.h"
#include "math/rng.h"

namespace tn {

// What a dropout op needs besides the tensors: the rate and the key of its masks. The epoch
// lives in device memory (written before each epoch), so a recorded sequence of ops replays
// with the current epoch's masks.
struct DropoutKey {
  float rate = 0.0f;                     // probability of dropping an element, in [0, 1)
  std::uint64_t seed = 0;                // the run's seed
  std::uint32_t member0 = 0;             // global index of the block's first member
  // Device [S] or null: the global index of block member s when members are not consecutive
  // (a sub-swarm of one architecture); null: member0 + s.
  const std::uint32_t* members = nullptr;
  const std::uint32_t* epoch = nullptr;  // device [1]: the epoch
  std::uint32_t pos0 = 0;                // epoch position of the batch's first row
  std::uint32_t layer = 0;               // dense layer index in model.layers
};

// The global index of block member s.
TN_HD std::uint32_t dropout_member(const DropoutKey& key, std::uint32_t s) {
  return key.members ? key.members[s] : key.member0 + s;
}

// The words every mask of one row draws from: Philox of (seed, member, Purpose::Dropout,
// epoch << 32 | position).
TN_HD Philox4x32 dropout_row_key(std::uint64_t seed, std::uint32_t member, std::uint32_t epoch, std::uint32_t pos) {
  return random_words(seed, member, Purpose::Dropout, static_cast<std::uint64_t>(epoch) << 32 | pos);
}

// The words of units 4·j4 .. 4·j4 + 3 in a row with words `row` of dense layer `layer`: one
// Philox call (counter: j4, layer, row words 2 and 3; key: row words 0 and 1) gives four units.
TN_HD Philox4x32 dropout_unit_words(const Philox4x32& row, std::uint32_t layer, int j4) {
  return philox4x32_10(static_cast<std::uint32_t>(j4), layer, row.v[2], row.v[3], row.v[0], row.v[1]);
}

// A unit's factor from its word: 0 (dropped, when uniform01(word) < rate) or 1 / (1 − rate).
TN_HD float dropout_scale(std::uint32_t word, float rate) {
  return uniform01(word) < rate ? 0.0f : 1.0f / (1.0f - rate);
}

// Unit j's factor in a row with words `row` of dense layer `layer`.
TN_HD float dropout_factor(const Philox4x32& row, std::uint32_t layer, int j, float rate) {
  return dropout_scale(dropout_unit_words(row, layer, j / 4).v[j % 4], rate);
}

}  // namespace tn
