// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011), identical on host and
// device. Every random value in a run is a pure function of
// (seed, member, purpose, counter): nothing is drawn from a stateful stream, so member k's
// numbers do not depend on which other members are trained, on threads, or on the device.
#pragma once
#include <cmath>
#include <cstdint>

#include "math/host_device.h"

namespace tn {

// Distinct streams for each use of randomness. Append only: values are part of the
// reproducibility contract of run files.
enum class Purpose : std::uint32_t {
  Init = 1,       // parameter initialization (counter: layer << 40 | element)
  Shuffle = 2,    // per-epoch batch order (counter: epoch << 32 | position)
  Bootstrap = 3,  // bootstrap resample indices (counter: draw index)
  Split = 4,      // train/val/test split permutation
  Data = 5,       // built-in dataset generators
  Subsample = 6,  // per-member subsample permutation keys
  Shards = 7,     // the shared permutation that partitions the training split
  Dropout = 8,    // dropout masks (counter: epoch << 32 | position; math/dropout.h)
  Search = 9,     // PBT's exploit and explore draws (counter: round << 16 | draw; train/search.h)
};

// The member value used for randomness shared by all members (shared batch order, split).
inline constexpr std::uint32_t kSharedMember = 0xFFFFFFFFu;

struct Philox4x32 {
  std::uint32_t v[4];
};

TN_HD Philox4x32 philox4x32_10(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2,
                               std::uint32_t c3, std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2;
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    const std::uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// Four independent 32-bit words for (seed, member, purpose, counter).
TN_HD Philox4x32 random_words(std::uint64_t seed, std::uint32_t member, Purpose purpose,
                              std::uint64_t counter) {
  return philox4x32_10(static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32),
                       member, static_cast<std::uint32_t>(purpose),
                       static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Uniform float in [0, 1) from the top 24 bits of a word.
TN_HD float uniform01(std::uint32_t w) { return static_cast<float>(w >> 8) * (1.0f / 16777216.0f); }
// Uniform double in [0, 1) from two words (53 bits).
TN_HD double uniform01_double(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t x = (static_cast<std::uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(x & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}
// Integer in [0, n) by Lemire's multiply-shift (bias < n / 2^32, negligible for data sizes).
TN_HD std::uint32_t uniform_below(std::uint32_t w, std::uint32_t n) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(w) * n) >> 32);
}
// A 32-bit mixing function (Wellons' lowbias32), the round function of keyed_permutation.
TN_HD std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Element i of a pseudo-random permutation of [0, n) keyed by four words: a 4-round Feistel
// network on the smallest even number of bits covering n, with cycle walking (re-encrypt
// until the value falls below n; it terminates because the network permutes its domain).
// O(1) per element and nothing stored, so member k's permutation is computed wherever needed.
TN_HD std::uint32_t keyed_permutation(const Philox4x32& key, std::uint32_t i, std::uint32_t n) {
  int bits = 2;
  while (bits < 32 && (1ull << bits) < n) bits += 2;
  const int half = bits / 2;
  const std::uint32_t mask = (1u << half) - 1u;
  std::uint32_t x = i;
  do {
    std::uint32_t left = x >> half, right = x & mask;
    for (int r = 0; r < 4; ++r) {
      const std::uint32_t t = left ^ (mix32(right ^ key.v[r]) & mask);
      left = right;
      right = t;
    }
    x = (left << half) | right;
  } while (x >= n);
  return x;
}

// Standard normal by Box–Muller from two words.
TN_HD float standard_normal(std::uint32_t w0, std::uint32_t w1) {
  const float u1 = (static_cast<float>(w0 >> 8) + 1.0f) * (1.0f / 16777216.0f);  // (0, 1]
  const float u2 = uniform01(w1);
  return sqrtf(-2.0f * logf(u1)) * cosf(6.283185307179586f * u2);
}

}  // namespace tn
