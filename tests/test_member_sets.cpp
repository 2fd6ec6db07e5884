// Per-member data modes: the sets each member trains on, keyed permutations, and training
// with unequal set sizes (group_by, shards) against members trained alone on their rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "backend/cpu/cpu_backend.h"
#include "data/member_sets.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::member_params;

namespace {

Config base_config(PerMember mode, double fraction, int S, bool shuffle = true) {
  Config c = parse_config("seed: 4\nswarm: {size: " + std::to_string(S) +
                              "}\nmodel:\n  layers:\n    - {type: dense, units: 6, activation: tanh}\n"
                              "    - {type: dense, units: 2}\noptimizer: {type: adam, lr: 0.02}\n"
                              "schedule: {type: cosine, warmup_epochs: 1}\n"
                              "data:\n  source: {type: spirals, n: 90}\n"
                              "train: {epochs: 4, batch_size: 8, shuffle: " + std::string(shuffle ? "true" : "false") + "}\n",
                          "test");
  c.data.per_member = mode;
  c.data.member_fraction = fraction;
  return c;
}

PreparedData spirals(const Config& cfg) { return prepare_data(load_dataset(cfg.data, true), cfg.data); }

}  // namespace

TEST_CASE("keyed_permutation is a permutation for every size") {
  for (std::uint32_t n : {1u, 2u, 3u, 5u, 17u, 64u, 1000u, 4099u}) {
    const Philox4x32 key = random_words(9, 3, Purpose::Subsample, 0);
    std::vector<char> seen(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t v = keyed_permutation(key, i, n);
      REQUIRE(v < n);
      CHECK_FALSE(seen[v]);
      seen[v] = 1;
    }
  }
  // Different keys give different permutations.
  int same = 0;
  for (std::uint32_t i = 0; i < 100; ++i)
    same += keyed_permutation(random_words(9, 3, Purpose::Subsample, 0), i, 100) ==
            keyed_permutation(random_words(9, 4, Purpose::Subsample, 0), i, 100);
  CHECK(same < 20);
}

TEST_CASE("member sets per mode") {
  SUBCASE("bootstrap and subsample fractions") {
    Config c = base_config(PerMember::Bootstrap, 0.5, 4);
    CHECK(make_member_sets(c, spirals(c)).m == 45);
    c = base_config(PerMember::Subsample, 0.3, 4);
    const MemberSets sub = make_member_sets(c, spirals(c));
    CHECK(sub.m == 27);
    std::set<std::uint32_t> rows;
    for (std::uint32_t j = 0; j < sub.m; ++j) rows.insert(BatchSampler::subsample_index(c.seed, 2, j, 90));
    CHECK(rows.size() == 27);  // without replacement
  }
  SUBCASE("shards partition the training split") {
    const Config c = base_config(PerMember::Shards, 1.0, 7);
    const MemberSets sh = make_member_sets(c, spirals(c));
    std::vector<int> hits(90, 0);
    for (int s = 0; s < 7; ++s) {
      CHECK((sh.size(s) == 12 || sh.size(s) == 13));
      for (std::uint32_t k = sh.offset[s]; k < sh.offset[s + 1]; ++k) ++hits[sh.rows[k]];
    }
    CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
    CHECK_THROWS_AS(make_member_sets(base_config(PerMember::Shards, 1.0, 91), spirals(base_config(PerMember::Shards, 1.0, 91))), ConfigError);
  }
}

TEST_CASE("member_epoch_rows: a member's own order, padded") {
  MemberSets sets;
  sets.mode = SampleMode::Sets;
  sets.rows = {10, 11, 12, 20, 21};
  sets.offset = {0, 3, 5};
  const std::uint32_t order[3] = {2, 0, 1};  // epoch order over the largest set (3)
  std::uint32_t out[4];
  member_epoch_rows(sets, 0, order, 4, out);
  CHECK(std::vector<std::uint32_t>(out, out + 4) == std::vector<std::uint32_t>{12, 10, 11, 10});
  member_epoch_rows(sets, 1, order, 4, out);  // order filtered to < 2: 0, 1
  CHECK(std::vector<std::uint32_t>(out, out + 4) == std::vector<std::uint32_t>{20, 21, 20, 20});
}

TEST_CASE("unequal sets: each group's member equals that member trained alone on its rows, bitwise") {
  // Three groups of 30, 19 and 7 training rows (batch 8: 4, 3 and 1 steps per epoch).
  Config cfg = base_config(PerMember::Shared, 1.0, 3, /*shuffle=*/false);
  PreparedData data = spirals(cfg);
  data.train.group.assign(data.train.n, 0);
  for (int i = 0; i < data.train.n; ++i) data.train.group[i] = i < 30 ? 0 : (i < 49 ? 1 : (i < 56 ? 2 : 0));
  data.group_names = {"a", "b", "c"};
  cfg.data.per_member = PerMember::GroupBy;
  cfg.data.group_by = "g";
  const MemberSets sets = make_member_sets(cfg, data);
  CHECK(sets.size(0) == 64);
  CHECK(sets.size(1) == 19);
  CHECK(sets.size(2) == 7);
  CpuBackend be(2);
  const TrainOutput together = train_swarm(cfg, data, sets, be, nullptr);
  for (int k = 0; k < 3; ++k) {
    Config alone = cfg;
    alone.swarm = {1, k, {}};
    alone.data.per_member = PerMember::Shared;
    PreparedData own = data;
    own.train = SplitData{};
    own.train.name = "train";
    for (int i = 0; i < data.train.n; ++i)
      if (data.train.group[i] == k) {
        own.train.X.insert(own.train.X.end(), &data.train.X[2 * i], &data.train.X[2 * i + 2]);
        own.train.y.push_back(data.train.y[i]);
        ++own.train.n;
      }
    const TrainOutput single = train_swarm(alone, own, be, nullptr);
    const auto a = member_params(together, k), b = member_params(single, 0);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    for (int e = 0; e < cfg.train.epochs; ++e)
      CHECK(together.train_loss[k * cfg.train.epochs + e] == single.train_loss[e]);
  }
  // group_by needs one member per group.
  Config wrong = cfg;
  wrong.swarm.size = 2;
  CHECK_THROWS_AS(make_member_sets(wrong, data), ConfigError);
}

TEST_CASE("subsample and bootstrap members are independent of the swarm, bitwise") {
  for (const auto& [mode, fraction] : {std::pair{PerMember::Subsample, 0.6}, std::pair{PerMember::Bootstrap, 0.7}}) {
    Config swarm = base_config(mode, fraction, 5);
    Config alone = swarm;
    alone.swarm = {1, 3, {}};
    CpuBackend be(2);
    const TrainOutput a = train_swarm(swarm, spirals(swarm), be, nullptr);
    const TrainOutput b = train_swarm(alone, spirals(alone), be, nullptr);
    CHECK(member_params(a, 3) == member_params(b, 0));
  }
}
