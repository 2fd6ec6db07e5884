// Search inside the swarm: the config keys and their errors; successive halving keeps exactly
// the best fraction (a property over random metrics) and its survivors are bitwise the members
// of a run without search; PBT's exploit copies exactly the source member's parameters and
// optimizer state, its draws are a pure function of (seed, member, round), and its results
// do not depend on the thread count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "cli_test_util.h"
#include "config_test_util.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "io/run_file.h"
#include "run/lineage.h"
#include "train/search.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::error_of;
using tn::test::member_params;
using tn::test::with;

namespace {

std::string search_yaml(int epochs, const std::string& search, int S = 12) {
  return "name: s\nseed: 9\nswarm: {size: " + std::to_string(S) + "}\nmodel:\n  layers:\n"
         "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n"
         "loss: cross_entropy\noptimizer: {type: adam, lr: {logspace: [1.0e-3, 0.3]}}\n"
         "data:\n  source: {type: spirals, n: 160}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
         "  per_member: bootstrap\ntrain: {epochs: " + std::to_string(epochs) + ", batch_size: 16}\n" +
         (search.empty() ? "" : "search: " + search + "\n");
}

struct Trained {
  TrainOutput out;
  std::vector<TrainOutput> checkpoints;  // with every_epochs
};

Trained train(const std::string& yaml, int threads, int every_epochs = 0) {
  const Config cfg = parse_config(yaml, "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  const MemberSets sets = make_member_sets(cfg, data);
  CpuBackend be(threads);
  Trained t;
  TrainControl control;
  if (every_epochs > 0) {
    control.checkpoint_every = every_epochs;
    control.checkpoint = [&](const TrainOutput& o) { t.checkpoints.push_back(o); };
  }
  t.out = train_swarm_in_chunks(cfg, data, sets, be, nullptr, 0, control);
  return t;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

const std::string kHalving = "{type: halving, rungs: [3, 6], keep: 1/3, metric: val_loss}";
const std::string kPbt = "{type: pbt, every_epochs: 3, quantile: 0.25, perturb: {optimizer.lr: [0.8, 1.25]}, "
                         "resample_probability: 0.5}";

}  // namespace

TEST_CASE("search config: halving and pbt keys, defaults and the YAML round trip") {
  const Config h = tn::test::parse(with("train: {epochs: 10}\nswarm: {size: 9}\nsearch: {type: halving, rungs: [2, 5]}\n"));
  CHECK(h.search.type == SearchConfig::Type::Halving);
  CHECK(h.search.rungs == std::vector<int>{2, 5});
  CHECK(h.search.keep == doctest::Approx(1.0 / 3.0));
  CHECK(h.search.metric == "train_loss");  // no validation split
  CHECK(tn::test::parse(with("train: {epochs: 10}\nsearch: {type: halving, rungs: [2], keep: 0.5}\n")).search.keep == 0.5);
  const Config p = tn::test::parse(
      "model:\n  layers:\n    - {units: 2}\ntrain: {epochs: 10}\nswarm: {size: 8}\noptimizer: {lr: {values: [0.1, 0.01]}}\n"
      "data:\n  source: spirals\n  split: {train: 0.8, val: 0.2}\n"
      "search: {type: pbt, every_epochs: 2, perturb: {optimizer.lr: [0.8, 1.2], optimizer.beta1: [0.9, 1.1]}, "
      "resample_probability: 0}\n");
  CHECK(p.search.type == SearchConfig::Type::Pbt);
  CHECK(p.search.metric == "val_loss");
  REQUIRE(p.search.perturb.size() == 2);
  CHECK(p.search.perturb[1].key == "optimizer.beta1");
  CHECK(p.search.perturb[1].factors == std::vector<double>{0.9, 1.1});
  for (const Config* c : {&h, &p}) {
    const Config back = parse_config(to_yaml(*c), "x");
    CHECK(config_differences(back, *c).empty());
    CHECK(back.search.perturb == c->search.perturb);
    CHECK(back.search.keep == c->search.keep);
  }
}

TEST_CASE("search config: errors name the key and the fix") {
  const std::string ten = "train: {epochs: 10}\n";
  CHECK_HAS(error_of(with(ten + "search: {type: halving, rungs: [4, 2]}\n")), "search.rungs[1]: rungs must increase");
  CHECK_HAS(error_of(with(ten + "search: {type: halving, rungs: [10]}\n")), "is not before the last epoch");
  CHECK_HAS(error_of(with(ten + "search: {type: halving, rungs: [2], keep: 2/0}\n")), "expected a fraction a/b");
  CHECK_HAS(error_of(with(ten + "search: {type: halving, rungs: [2], keep: 1.5}\n")), "search.keep: must be between 0 and 1");
  CHECK_HAS(error_of(with(ten + "search: {type: halving}\n")), "rungs");
  CHECK_HAS(error_of(with(ten + "search: {type: halving, rungs: [2], every_epochs: 2}\n")), "every_epochs");
  CHECK_HAS(error_of(with(ten + "search: {type: pbt, every_epochs: 10}\n")), "no round would run");
  CHECK_HAS(error_of(with(ten + "swarm: {size: 3}\nsearch: {type: pbt, every_epochs: 2}\n")), "no member would be replaced");
  CHECK_HAS(error_of(with(ten + "swarm: {size: 8}\nsearch: {type: pbt, every_epochs: 2, perturb: {model.init_scale: [2]}}\n")),
            "'model.init_scale' cannot be perturbed");
  CHECK_HAS(error_of(with(ten + "swarm: {size: 8}\nsearch: {type: pbt, every_epochs: 2, perturb: {optimizer.lr: [0.8]}}\n")),
            "search.perturb.optimizer.lr: resample_probability is 0.25");
  CHECK_HAS(error_of(with(ten + "search: {type: halving, rungs: [2], metric: val_loss}\n")), "needs a validation split");
  CHECK_HAS(error_of(with("train: {epochs: 10, early_stopping: {metric: train_loss}}\nsearch: {type: halving, rungs: [2]}\n")),
            "remove one of the two");
  CHECK_HAS(error_of(with(ten + "search: {type: asha}\n")), "search.type");
  CHECK_HAS(error_of(with(ten + "swarm: {size: 8}\nsearch: {type: pbt, every_epochs: 2, perturb: {optimizer.momentum: [0.9]}, "
                                "resample_probability: 0}\n")),
            "'optimizer.momentum' is not a setting of optimizer adam");
  CHECK_HAS(error_of(with(ten + "swarm: {size: 3}\nsearch: {type: pbt, every_epochs: 2, quantile: 0.25}\n")),
            "quantile × swarm.size (0.25 × 3) is below 1, so no member would be replaced; raise quantile or the swarm "
            "size (at least 4)");
  // Sequence data have a validation split only when data.split gives one (no default metric on val_loss then).
  const std::string walk = "model:\n  layers:\n    - {type: lstm, units: 4}\n    - {type: dense, units: 1}\nloss: mse\n"
                           "data:\n  source: {type: random_walk, series: 1, length: 60}\n  split: {train: 0.8, test: 0.2}\n"
                           "  sequence: {window: 4, target: close}\n" + ten;
  CHECK(tn::test::parse(walk + "search: {type: halving, rungs: [2]}\n").search.metric == "train_loss");
  CHECK_HAS(error_of(walk + "search: {type: halving, rungs: [2], metric: val_loss}\n"), "needs a validation split");
  CHECK_HAS(error_of("model:\n  layers:\n    - {type: lstm, units: 4}\n    - {type: dense, units: 1}\nloss: mse\n"
                     "data:\n  source: {type: random_walk, series: 1, length: 60}\n  split: {train: 0.8, test: 0.2}\n"
                     "  sequence: {window: 4, target: close}\ntrain: {epochs: 10, early_stopping: {metric: val_loss}}\n"),
            "needs a validation split");
  CHECK_HAS(error_of("model:\n  layers:\n    - {type: lstm, units: 4}\n    - {type: dense, units: 1}\nloss: mse\n"
                     "data:\n  source: {type: random_walk, series: 2, length: 60}\n  per_member: {group_by: ticker}\n"
                     "  sequence: {window: 4, target: close}\n" + ten + "search: {type: halving, rungs: [2]}\n"),
            "group_by trains one member per group");
}

TEST_CASE("halving: the cut keeps exactly the best ceil(keep·n) candidates (random metrics, NaN worst)") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int S = 1 + static_cast<int>(rng() % 40);
    const double keep = std::vector<double>{1.0 / 3.0, 0.5, 0.25, 0.9}[trial % 4];
    const bool maximize = trial % 2;
    std::vector<double> v(S);
    std::vector<char> cand(S);
    for (int s = 0; s < S; ++s) {
      v[s] = rng() % 7 == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(rng() % 10);  // ties too
      cand[s] = rng() % 5 != 0;
    }
    const std::vector<int> cut = halving_cut(v, cand, maximize, keep);
    const int n = static_cast<int>(std::count(cand.begin(), cand.end(), 1));
    const int kept = n - static_cast<int>(cut.size());
    CHECK(kept == (n == 0 ? 0 : std::max(1, static_cast<int>(std::ceil(keep * n - 1e-9)))));
    const auto better = [&](int a, int b) {  // a strictly ahead of b in the ranking
      if (std::isnan(v[a]) != std::isnan(v[b])) return std::isnan(v[b]);
      if (!std::isnan(v[a]) && v[a] != v[b]) return maximize ? v[a] > v[b] : v[a] < v[b];
      return a < b;
    };
    for (int c : cut) {
      CHECK(cand[c]);
      for (int s = 0; s < S; ++s)  // every kept candidate ranks ahead of every cut one
        if (cand[s] && std::find(cut.begin(), cut.end(), s) == cut.end()) CHECK(better(s, c));
    }
  }
}

TEST_CASE("halving counts: members training after each rung, a diverged member not among them") {
  // Six members, rungs after epochs 3 and 6: #1 and #4 cut at rung 1, #2 at rung 2; #5 diverged in
  // epoch 5 (rung 0: never cut), so it trains after rung 1 but not after rung 2.
  const std::vector<int> rung = {0, 1, 2, 0, 1, 0}, diverged = {-1, -1, -1, -1, -1, 5};
  CHECK(halving_counts({3, 6}, rung, diverged) == std::vector<int>{6, 4, 2});
  CHECK(halving_counts({3, 6}, rung, {}) == std::vector<int>{6, 4, 3});
}

TEST_CASE("pbt: the bottom quantile takes a source from the top, draws fixed by (seed, member, round)") {
  Config cfg = tn::test::parse(with("train: {epochs: 10}\nswarm: {size: 16}\noptimizer: {lr: {logspace: [1.0e-4, 1.0e-1]}}\n"
                                    "search: {type: pbt, every_epochs: 2, quantile: 0.25, "
                                    "perturb: {optimizer.lr: [0.5, 2]}, resample_probability: 0.5}\n"));
  std::vector<double> metric(16);
  for (int s = 0; s < 16; ++s) metric[s] = (s * 7) % 16;  // a permutation: member s ranks (s·7 mod 16)-th
  metric[3] = std::numeric_limits<double>::quiet_NaN();    // diverged: worst
  std::vector<std::vector<double>> lr(1, std::vector<double>(16));
  for (int s = 0; s < 16; ++s) lr[0][s] = find_member_values(cfg, "optimizer.lr")->at(s);
  const PbtRound r = pbt_round(cfg, 1, metric, lr);
  const std::vector<int> order = rank_members(metric, std::vector<char>(16, 1), false);
  const std::vector<int> top(order.begin(), order.begin() + 4), bottom(order.end() - 4, order.end());
  CHECK(std::find(bottom.begin(), bottom.end(), 3) != bottom.end());
  const MemberValues& mv = *find_member_values(cfg, "optimizer.lr");
  for (int s = 0; s < 16; ++s) {
    CAPTURE(s);
    if (std::find(bottom.begin(), bottom.end(), s) == bottom.end()) {
      CHECK(r.source[s] == s);
      CHECK(r.values[0][s] == lr[0][s]);
      continue;
    }
    CHECK(std::find(top.begin(), top.end(), r.source[s]) != top.end());
    const double v = r.values[0][s], src = lr[0][r.source[s]];
    bool resampled = false;
    for (long long i = 0; i < mv.count(); ++i) resampled = resampled || v == mv.value(i);
    CHECK((v == src * 0.5 || v == src * 2 || resampled));
  }
  CHECK(pbt_round(cfg, 1, metric, lr).source == r.source);  // pure
  CHECK(pbt_round(cfg, 2, metric, lr).source != r.source);  // another round draws anew (for this seed)
  cfg.seed = 1;
  CHECK(pbt_round(cfg, 1, metric, lr).source != r.source);
}

TEST_CASE("halving: survivors are bitwise the members of a run without search, the stopped ones stop at their rung") {
  // 40 members: after each rung the survivors continue packed (fewer blocks of 8 or 16).
  constexpr int E = 9, S = 40;
  for (const char* per_member : {"bootstrap", "subsample", "shared", "shards"}) {
    CAPTURE(per_member);
    const auto yaml = [&](const std::string& search) {
      std::string y = search_yaml(E, search, S);
      return y.replace(y.find("bootstrap"), 9, per_member);
    };
    const Trained plain = train(yaml(""), 2, 1);  // checkpoints after every epoch
    const Trained cut = train(yaml(kHalving), 1, 1);
    REQUIRE(plain.checkpoints.size() == E);
    const TrainOutput& h = cut.out;
    REQUIRE(h.search_epochs == std::vector<int>{3, 6});
    REQUIRE(h.search_rung.size() == S);
    CHECK(std::count(h.search_rung.begin(), h.search_rung.end(), 1) == 26);  // 40 -> 14
    CHECK(std::count(h.search_rung.begin(), h.search_rung.end(), 2) == 9);   // 14 -> 5
    const std::size_t per = static_cast<std::size_t>(h.pred_n) * 2;
    for (int s = 0; s < S; ++s) {
      CAPTURE(s);
      const int rung = h.search_rung[s];
      CHECK(h.stopped_epoch[s] == (rung == 0 ? -1 : 3 * rung));
      const TrainOutput& same = rung == 0 ? plain.out : plain.checkpoints[3 * rung - 1];  // after epoch 9, 3 or 6
      CHECK(same_bits(member_params(h, s), member_params(same, s)));
      const int trained = rung == 0 ? E : 3 * rung;
      for (int e = 0; e < E; ++e) {
        const std::size_t at = static_cast<std::size_t>(s) * E + e;
        if (e < trained) CHECK(h.val_loss[at] == plain.out.val_loss[at]);
        else CHECK(std::isnan(h.val_loss[at]));
      }
      if (rung == 0)
        CHECK(std::equal(h.pred_members.begin() + s * per, h.pred_members.begin() + (s + 1) * per,
                         plain.out.pred_members.begin() + s * per));
    }
    // The packed run's checkpoints are the whole swarm's, each member where it stood.
    REQUIRE(cut.checkpoints.size() == E);
    const TrainOutput& ck = cut.checkpoints[6];  // after epoch 7, packed since epoch 6
    CHECK(ck.layout.S == S);
    CHECK(ck.epochs == 7);
    for (int s = 0; s < S; ++s) {
      CAPTURE(s);
      const int rung = h.search_rung[s];
      const TrainOutput& at = plain.checkpoints[rung == 0 || rung == 3 ? 6 : 3 * rung - 1];
      CHECK(same_bits(member_params(ck, s), member_params(at, s)));
      CHECK(same_bits(member_params(ck, ck.opt1, s), member_params(at, at.opt1, s)));
    }
    // The survivors of rung 1 are the best third by validation loss after epoch 3.
    std::vector<double> v3(S);
    for (int s = 0; s < S; ++s) v3[s] = plain.checkpoints[2].val_loss[static_cast<std::size_t>(s) * 3 + 2];
    const std::vector<int> order = rank_members(v3, std::vector<char>(S, 1), false);  // [2]: epoch 3's checkpoint
    for (int i = 0; i < S; ++i) CHECK((h.search_rung[order[i]] == 1) == (i >= 14));
  }
}

TEST_CASE("pbt: exploit copies the source member's parameters and optimizer state exactly, same on 1 and 2 threads") {
  constexpr int E = 7;
  const Trained plain = train(search_yaml(E, ""), 2, 3);
  const Trained pbt = train(search_yaml(E, kPbt), 2, 3);
  REQUIRE(pbt.checkpoints.size() >= 1);
  const TrainOutput& after = pbt.checkpoints[0];  // after epoch 3 and round 1
  const TrainOutput& before = plain.checkpoints[0];
  REQUIRE(after.search_epochs == std::vector<int>{3});
  REQUIRE(after.search_source.size() == 12);
  int exploited = 0;
  for (int s = 0; s < 12; ++s) {
    CAPTURE(s);
    const int src = after.search_source[s];
    exploited += src != s;
    CHECK(same_bits(member_params(after, after.params, s), member_params(before, before.params, src)));
    CHECK(same_bits(member_params(after, after.opt1, s), member_params(before, before.opt1, src)));
    CHECK(same_bits(member_params(after, after.opt2, s), member_params(before, before.opt2, src)));
    CHECK(after.search_values[0][12 + s] != 0);
  }
  CHECK(exploited == 3);  // floor(0.25 · 12)
  const Trained again = train(search_yaml(E, kPbt), 1);
  CHECK(same_bits(again.out.params, pbt.out.params));
  CHECK(again.out.search_source == pbt.out.search_source);
  CHECK(again.out.search_values == pbt.out.search_values);
  CHECK(pbt.out.search_epochs == std::vector<int>{3, 6});
}

TEST_CASE("eval: a halving run's rungs and kept members' ensemble, a pbt run's best lineage, walked from /search/source") {
  namespace fs = std::filesystem;
  const fs::path dir = tn::test::scratch_path("search-eval", "");
  tn::test::write_text(dir / "h.yaml", search_yaml(8, kHalving) + "device: cpu\n");
  tn::test::write_text(dir / "p.yaml", search_yaml(7, kPbt) + "device: cpu\n");
  REQUIRE(tn::test::run_binary_in(dir, {"train", "h.yaml", "--out", "h.h5", "--force", "-q"}).first == 0);
  REQUIRE(tn::test::run_binary_in(dir, {"train", "p.yaml", "--out", "p.h5", "--force", "-q"}).first == 0);
  REQUIRE(tn::test::run_binary_in(dir, {"eval", "h.h5", "--out", "h.json", "--force", "-q"}).first == 0);
  REQUIRE(tn::test::run_binary_in(dir, {"eval", "p.h5", "--out", "p.json", "--force", "-q"}).first == 0);
  const nlohmann::json h = nlohmann::json::parse(tn::test::slurp(dir / "h.json"))["search"];
  CHECK(h["type"] == "halving");
  CHECK(h["members_after_rung"] == std::vector<int>{12, 4, 2});
  REQUIRE(h["finished_members"].size() == 2);
  CHECK(h["finished_ensemble"]["accuracy"].is_number());
  const RunFile hf = read_run_file((dir / "h.h5").string());
  for (int k : h["finished_members"]) CHECK(hf.search.rung[static_cast<std::size_t>(k)] == 0);
  const nlohmann::json p = nlohmann::json::parse(tn::test::slurp(dir / "p.json"));
  const nlohmann::json& lineage = p["search"]["best_lineage"];
  REQUIRE(!lineage.empty());
  CHECK(lineage.front()["first_epoch"] == 1);
  CHECK(lineage.back()["last_epoch"] == 7);
  CHECK(lineage.back()["member"] == p["search"]["best_member"]);
  // Walk /search/source back from the best member: the lineage's members, stretch by stretch.
  const RunFile pf = read_run_file((dir / "p.h5").string());
  const std::size_t S = 12, R = pf.search.epochs.size();
  int m = p["search"]["best_member"];
  std::vector<int> walked = {m};
  for (std::size_t r = R; r-- > 0;) {
    const int src = pf.search.source[r * S + static_cast<std::size_t>(m)];
    if (src != m) walked.insert(walked.begin(), src);
    m = src;
  }
  std::vector<int> listed;
  for (const auto& st : lineage) listed.push_back(st["member"]);
  CHECK(listed == walked);
  CHECK(lineage.back()["optimizer.lr"] == pf.search.values[0][R * S + static_cast<std::size_t>(p["search"]["best_member"].get<int>())]);
}
