// Training sequence models end to end: member independence for LSTM swarms on per-series
// data (member k trained alone equals member k of the swarm, bitwise), thread-count
// invariance, and LSTM/GRU members learning a seasonal series.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "data/prepare.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::member_params;

namespace {

std::string stocks_yaml(int S, int first, const std::string& cell, const std::string& source, int epochs,
                        const std::string& per_member = "{group_by: ticker}") {
  return "name: t\nseed: 3\nswarm: {size: " + std::to_string(S) + ", first_member: " + std::to_string(first) +
         "}\nmodel:\n  layers:\n    - {type: " + cell + ", units: 8}\n    - {type: dense, units: 1}\n"
         "loss: mse\noptimizer: {type: adam, lr: 0.01}\n"
         "data:\n  source: " + source + "\n  split: {train: 0.7, val: 0.15, test: 0.15}\n"
         "  per_member: " + per_member + "\n  normalize: standard\n  normalize_per_member: " +
         (per_member == "bootstrap" ? "false" : "true") + "\n"
         "  sequence: {window: 8, horizon: 1, target: close}\n"
         "train: {epochs: " + std::to_string(epochs) + ", batch_size: 16}\n";
}

const std::string kWalk = "{type: random_walk, series: 6, length: 160, seed: 5}";

TrainOutput run(const std::string& yaml, int threads) {
  const Config cfg = parse_config(yaml, "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, false), cfg.data);
  CpuBackend be(threads);
  return train_swarm(cfg, data, be, nullptr);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("lstm swarm: member 4 trained alone equals member 4 of a bootstrapped swarm of 6, bitwise") {
  const std::string walk = "{type: random_walk, series: 1, length: 300, seed: 5}";
  const TrainOutput swarm = run(stocks_yaml(6, 0, "lstm", walk, 3, "bootstrap"), 2);
  const TrainOutput alone = run(stocks_yaml(1, 4, "lstm", walk, 3, "bootstrap"), 1);
  CHECK(swarm.kernel.find("separate ops per step") != std::string::npos);
  CHECK(same_bits(member_params(swarm, 4), member_params(alone, 0)));
  const int E = swarm.epochs;
  CHECK(std::memcmp(&swarm.train_loss[4 * E], &alone.train_loss[0], E * sizeof(float)) == 0);
  CHECK(!same_bits(member_params(swarm, 3), member_params(swarm, 4)));
}

TEST_CASE("series transforms and window scaling: member k alone equals member k of the swarm, bitwise") {
  // `yaml` with more data.sequence keys, without data.normalize (window scaling), or with early
  // stopping.
  const auto with = [](std::string yaml, const std::string& keys, bool window, bool early) {
    yaml.replace(yaml.find("target: close}"), 14, "target: close, " + keys + "}");
    const auto cut = [&](const std::string& text) { yaml.erase(yaml.find(text), text.size()); };
    if (window) cut("  normalize: standard\n"), cut("  normalize_per_member: false\n");
    if (early) yaml.insert(yaml.find("train: {") + 8, "early_stopping: {metric: val_loss, patience: 1}, ");
    return yaml;
  };
  // diff with window scaling on one bootstrapped series.
  const std::string walk = "{type: random_walk, series: 1, length: 300, seed: 5}";
  const std::string diff = "transform: diff, scale: window, season: 5";
  TrainOutput swarm = run(with(stocks_yaml(6, 0, "lstm", walk, 3, "bootstrap"), diff, true, false), 2);
  TrainOutput alone = run(with(stocks_yaml(1, 4, "lstm", walk, 3, "bootstrap"), diff, true, false), 1);
  CHECK(same_bits(member_params(swarm, 4), member_params(alone, 0)));
  CHECK(!same_bits(member_params(swarm, 3), member_params(swarm, 4)));
  // log_diff with the series' statistics, and early stopping.
  swarm = run(with(stocks_yaml(6, 0, "gru", walk, 4, "bootstrap"), "transform: log_diff", false, true), 2);
  alone = run(with(stocks_yaml(1, 4, "gru", walk, 4, "bootstrap"), "transform: log_diff", false, true), 1);
  CHECK(same_bits(member_params(swarm, 4), member_params(alone, 0)));
  const int E = swarm.epochs;
  CHECK(std::memcmp(&swarm.val_loss[4 * E], &alone.val_loss[0], E * sizeof(float)) == 0);
}

TEST_CASE("gru swarm: results do not depend on the thread count, bitwise") {
  const TrainOutput one = run(stocks_yaml(6, 0, "gru", kWalk, 2), 1);
  const TrainOutput two = run(stocks_yaml(6, 0, "gru", kWalk, 2), 2);
  CHECK(same_bits(one.params, two.params));
  CHECK(same_bits(one.train_loss, two.train_loss));
}

TEST_CASE("lstm and gru members learn a seasonal series (validation mse < 0.01 in normalized units)") {
  const std::string seasonal =
      "{type: random_walk, series: 4, length: 300, seed: 3, volatility: 0.0, drift: 0.0, season_amplitude: 0.2, "
      "season_period: 20}";
  for (const char* cell : {"lstm", "gru"}) {
    CAPTURE(cell);
    const TrainOutput t = run(stocks_yaml(4, 0, cell, seasonal, 30), 2);
    const int E = t.epochs;
    for (int s = 0; s < 4; ++s) {
      CAPTURE(s);
      CHECK(t.val_loss[s * E + E - 1] < 0.01f);
      CHECK(t.val_loss[s * E + E - 1] < 0.1f * t.val_loss[s * E]);
    }
  }
}
