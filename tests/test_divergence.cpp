// Divergence isolation: in a per-member learning-rate sweep with one absurd rate, that member
// diverges (recorded with its epoch, left out of the ensemble) and every other member is
// bitwise what it is in a run without it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "run/stored_swarm.h"
#include "run/train_run.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::member_params;

namespace {

std::string out_path() {
  return (std::filesystem::temp_directory_path() / ("turbanet-div-" + std::to_string(::getpid()) + ".h5")).string();
}

// Members 0..3 take learning rates 0.05, 1e30, 0.1, 0.02; alone (S = 1) as a plain number.
std::string sweep_yaml(int S, int first) {
  const char* const rates[] = {"0.05", "1.0e30", "0.1", "0.02"};
  const std::string lr = S == 1 ? rates[first % 4] : "{values: [0.05, 1.0e30, 0.1, 0.02]}";
  return "name: d\nseed: 4\ndevice: cpu\nswarm: {size: " + std::to_string(S) + ", first_member: " + std::to_string(first) +
         "}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: relu}\n    - {type: dense, units: 2}\n"
         "loss: cross_entropy\noptimizer: {type: sgd, lr: " + lr + "}\n"
         "data:\n  source: {type: spirals, n: 80}\n  split: {train: 0.75, test: 0.25}\n"
         "train: {epochs: 4, batch_size: 16}\n"
         "output: {path: '" + out_path() + "'}\n";
}

TrainResult train(const std::string& yaml) {
  TrainingRun run(parse_config(yaml, "test"), 2, true, std::chrono::steady_clock::now());
  return run.run({});
}

}  // namespace

TEST_CASE("divergence isolation: one absurd lr in a sweep leaves the other members bitwise unchanged") {
  const TrainResult swarm = train(sweep_yaml(4, 0));
  CHECK(swarm.diverged == std::vector<int>{1});
  CHECK(swarm.out.diverged_epoch[1] == 1);
  CHECK(swarm.final_eval.record.excluded == std::vector<int>{1});  // left out of the ensemble
  for (int k : {0, 2, 3}) {
    CAPTURE(k);
    const TrainResult alone = train(sweep_yaml(1, k));
    CHECK(alone.diverged.empty());
    const std::vector<float> a = member_params(swarm.out, k), b = member_params(alone.out, 0);
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    const std::size_t per = static_cast<std::size_t>(swarm.out.pred_n) * 2;
    CHECK(std::memcmp(&swarm.out.pred_members[k * per], alone.out.pred_members.data(), per * sizeof(float)) == 0);
  }
}

TEST_CASE("a diverged member is frozen at the step its loss became non-finite, and every command leaves it out") {
  // Alone with lr 1e30: the first step's update is finite but huge, the next step's loss is not.
  std::string yaml = sweep_yaml(1, 1);
  const TrainResult four = train(yaml);
  REQUIRE(four.diverged == std::vector<int>{1});
  const std::vector<float> p = member_params(four.out, 0);
  for (float v : p) REQUIRE(std::isfinite(v));  // the parameters it was frozen with, kept
  CHECK(p != member_params(four.out, four.out.init_params, 0));  // its first step was taken
  // eval, predict and export read the run file through load_swarm_model: the member is left out there too.
  const StoredSwarm stored = load_swarm_model(out_path());
  for (float v : stored.params) CHECK(std::isnan(v));
  // Frozen: more epochs change nothing, bit for bit.
  const std::string one_epoch = "train: {epochs: 4,";
  REQUIRE(yaml.find(one_epoch) != std::string::npos);
  yaml.replace(yaml.find(one_epoch), one_epoch.size(), "train: {epochs: 1,");
  const TrainResult one = train(yaml);
  const std::vector<float> q = member_params(one.out, 0);
  CHECK(std::memcmp(p.data(), q.data(), p.size() * sizeof(float)) == 0);
  // Its history after the epoch it diverged in is NaN; its predictions are NaN (left out).
  CHECK(four.out.diverged_epoch[0] == 1);
  for (int e = 1; e < 4; ++e) CHECK(std::isnan(four.out.train_loss[e]));
  for (float v : four.out.pred_members) CHECK(std::isnan(v));
  CHECK(four.final_eval.record.excluded == std::vector<int>{1});
}
