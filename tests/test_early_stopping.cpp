// Per-member early stopping: the rule by hand, member independence (member k of a swarm equals
// member k trained alone, bitwise), restore_best against a run that simply ends at the best
// epoch, and the run ending when every member has stopped.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "train/early_stop.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::member_params;

namespace {

// Members 0..3 take learning rates 0.3, 0.02, 0.1, 0.005; a member trained alone (S = 1,
// first = k) is given its rate as a plain number.
const char* const kRates[] = {"0.3", "0.02", "0.1", "0.005"};

std::string es_yaml(int S, int first, int epochs, const std::string& early_stopping) {
  const std::string lr = S == 1 ? kRates[first % 4] : "{values: [0.3, 0.02, 0.1, 0.005]}";
  return "name: es\nseed: 11\nswarm: {size: " + std::to_string(S) + ", first_member: " + std::to_string(first) +
         "}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n"
         "loss: cross_entropy\noptimizer: {type: adam, lr: " + lr + "}\n"
         "data:\n  source: {type: spirals, n: 120}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
         "  per_member: bootstrap\ntrain: {epochs: " + std::to_string(epochs) + ", batch_size: 16" +
         (early_stopping.empty() ? "" : ", early_stopping: " + early_stopping) + "}\n";
}

TrainOutput train(const std::string& yaml, int threads) {
  const Config cfg = parse_config(yaml, "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CpuBackend be(threads);
  return train_swarm(cfg, data, be, nullptr);
}

bool same_bits(const float* a, const float* b, std::size_t n) { return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0; }
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && same_bits(a.data(), b.data(), a.size());
}

const std::string kStop = "{metric: val_loss, patience: 2, min_delta: 0.01, restore_best: true}";

}  // namespace

TEST_CASE("early stopping rule: improvement by more than min_delta, stop after patience epochs without") {
  EarlyStoppingConfig es;
  es.metric = "val_loss";
  es.patience = 2;
  es.min_delta = 0.1;
  double best = early_stop_initial_best(es);
  int best_epoch = 0, stopped = -1;
  CHECK(early_stop_update(es, 1.0, 1, best, best_epoch, stopped) == EarlyStopEvent::Improved);
  CHECK(early_stop_update(es, 0.95, 2, best, best_epoch, stopped) == EarlyStopEvent::None);  // not by > 0.1
  CHECK(early_stop_update(es, 0.8, 3, best, best_epoch, stopped) == EarlyStopEvent::Improved);
  CHECK(best == 0.8);
  CHECK(best_epoch == 3);
  CHECK(early_stop_update(es, std::nan(""), 4, best, best_epoch, stopped) == EarlyStopEvent::None);
  CHECK(early_stop_update(es, 0.75, 5, best, best_epoch, stopped) == EarlyStopEvent::Stopped);
  CHECK(stopped == 5);
  CHECK(best_epoch == 3);
  es.metric = "val_accuracy";  // larger is better
  best = early_stop_initial_best(es);
  best_epoch = 0;
  CHECK(early_stop_update(es, 0.5, 1, best, best_epoch, stopped) == EarlyStopEvent::Improved);
  CHECK(early_stop_update(es, 0.3, 2, best, best_epoch, stopped) == EarlyStopEvent::None);
}

TEST_CASE("early stopping: member k of the swarm equals member k trained alone, bitwise") {
  constexpr int S = 4, E = 14;
  const TrainOutput swarm = train(es_yaml(S, 0, E, kStop), 2);
  REQUIRE(swarm.stopped_epoch.size() == S);
  int stopped = 0;
  for (int e : swarm.stopped_epoch) stopped += e > 0 && e < E;
  CHECK(stopped >= 1);  // the test is only meaningful when some member stops early
  for (int k = 0; k < S; ++k) {
    CAPTURE(k);
    const TrainOutput alone = train(es_yaml(1, k, E, kStop), 1);
    CHECK(alone.stopped_epoch[0] == swarm.stopped_epoch[k]);
    CHECK(alone.best_epoch[0] == swarm.best_epoch[k]);
    CHECK(same_bits(member_params(swarm, k), member_params(alone, 0)));
    const std::size_t per = static_cast<std::size_t>(swarm.pred_n) * 2;
    CHECK(same_bits(&swarm.pred_members[k * per], alone.pred_members.data(), per));
    // Alone, the run ends when the member stops; the swarm's history has NaN after that.
    const int n = alone.epochs;
    CHECK(same_bits(&swarm.val_loss[static_cast<std::size_t>(k) * swarm.epochs], alone.val_loss.data(), n));
    CHECK(same_bits(&swarm.train_loss[static_cast<std::size_t>(k) * swarm.epochs], alone.train_loss.data(), n));
    for (int e = n; e < swarm.epochs; ++e) CHECK(std::isnan(swarm.train_loss[static_cast<std::size_t>(k) * swarm.epochs + e]));
  }
}

TEST_CASE("early stopping with restore_best: the parameters of the best epoch, as a run ending there has them") {
  constexpr int S = 4, E = 14;
  const TrainOutput swarm = train(es_yaml(S, 0, E, kStop), 2);
  for (int k = 0; k < S; ++k) {
    CAPTURE(k);
    const int best = swarm.best_epoch[k];
    REQUIRE(best >= 1);
    const TrainOutput plain = train(es_yaml(1, k, best, ""), 1);  // constant schedule: epochs change nothing else
    CHECK(same_bits(member_params(swarm, k), member_params(plain, 0)));
    CHECK(swarm.best_value[k] == static_cast<double>(plain.val_loss[best - 1]));
  }
  // Without restore_best a stopped member keeps the parameters of the epoch it stopped after.
  const TrainOutput kept = train(es_yaml(S, 0, E, "{metric: val_loss, patience: 2, min_delta: 0.01, restore_best: false}"), 2);
  for (int k = 0; k < S; ++k) {
    CAPTURE(k);
    const int last = kept.stopped_epoch[k] > 0 ? kept.stopped_epoch[k] : kept.epochs;
    const TrainOutput plain = train(es_yaml(1, k, last, ""), 1);
    CHECK(same_bits(member_params(kept, k), member_params(plain, 0)));
  }
}

TEST_CASE("early stopping: training ends when every member has stopped") {
  const TrainOutput t = train(es_yaml(4, 0, 200, "{metric: train_loss, patience: 1, min_delta: 0.5}"), 2);
  // Each member improves from +inf in epoch 1, then never by 0.5: all stop after epoch 2.
  CHECK(t.epochs == 2);
  CHECK(t.train_loss.size() == 4 * 2);
  for (int s = 0; s < 4; ++s) {
    CHECK(t.stopped_epoch[s] == 2);
    CHECK(t.best_epoch[s] == 1);
  }
}

TEST_CASE("early stopping: a swarm trained in chunks of members (a GPU's memory plan) equals the whole swarm") {
  const Config cfg = parse_config(es_yaml(4, 0, 14, kStop), "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  const MemberSets sets = make_member_sets(cfg, data);
  CpuBackend be(2);
  const TrainOutput whole = train_swarm_in_chunks(cfg, data, sets, be, nullptr, 0);
  const TrainOutput chunks = train_swarm_in_chunks(cfg, data, sets, be, nullptr, 3);  // members 0-2, then 3
  CHECK(chunks.epochs == whole.epochs);
  CHECK(chunks.stopped_epoch == whole.stopped_epoch);
  CHECK(chunks.best_epoch == whole.best_epoch);
  CHECK(same_bits(chunks.params, whole.params));
  CHECK(same_bits(chunks.val_loss.data(), whole.val_loss.data(), whole.val_loss.size()));  // NaN after stops, bitwise
  CHECK(same_bits(chunks.pred_members, whole.pred_members));
}
