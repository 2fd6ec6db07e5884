// Divergence isolation: in a per-member learning-rate sweep with one absurd rate, that member
// diverges (recorded with its epoch, left out of the ensemble) and every other member is
// bitwise what it is in a run without it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "run/train_run.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::member_params;

namespace {

// Members 0..3 take learning rates 0.05, 1e30, 0.1, 0.02; alone (S = 1) as a plain number.
std::string sweep_yaml(int S, int first) {
  const char* const rates[] = {"0.05", "1.0e30", "0.1", "0.02"};
  const std::string lr = S == 1 ? rates[first % 4] : "{values: [0.05, 1.0e30, 0.1, 0.02]}";
  return "name: d\nseed: 4\ndevice: cpu\nswarm: {size: " + std::to_string(S) + ", first_member: " + std::to_string(first) +
         "}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: relu}\n    - {type: dense, units: 2}\n"
         "loss: cross_entropy\noptimizer: {type: sgd, lr: " + lr + "}\n"
         "data:\n  source: {type: spirals, n: 80}\n  split: {train: 0.75, test: 0.25}\n"
         "train: {epochs: 4, batch_size: 16}\n"
         "output: {path: '" + (std::filesystem::temp_directory_path() / ("turbanet-div-" + std::to_string(::getpid()) + ".h5")).string() + "'}\n";
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
