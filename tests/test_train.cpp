// Training-loop properties: member independence, thread-count invariance, agreement with an
// independent re-implementation, and end-to-end accuracy on spirals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "data/prepare.h"
#include "math/activations.h"
#include "train/trainer.h"
#include "target_test_util.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::member_params;

namespace {

std::string spirals_yaml(int S, int first, const std::string& extra_layers, const std::string& rest) {
  return "name: t\nseed: 7\nswarm: {size: " + std::to_string(S) + ", first_member: " + std::to_string(first) +
         "}\nmodel:\n  layers:\n" + extra_layers + "    - {type: dense, units: 2}\n" + rest;
}

const std::string kHidden = "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 8, activation: gelu}\n";
const std::string kRest =
    "loss: cross_entropy\noptimizer: {type: adam, lr: 0.01, grad_clip: 1.0}\n"
    "schedule: {type: cosine, warmup_epochs: 1, min_lr: 0.001}\n"
    "data:\n  source: {type: spirals, n: 100}\n  split: {train: 0.8, val: 0.1, test: 0.1}\n"
    "  per_member: bootstrap\ntrain: {epochs: 6, batch_size: 32, shuffle: true}\n";

TrainOutput run(const std::string& yaml, int threads, CpuTarget target = default_cpu_target()) {
  const Config cfg = parse_config(yaml, "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CpuBackend be(threads, target);
  return train_swarm(cfg, data, be, nullptr);
}

// A model for the lane kernel (kHidden) and one for the separate ops: its 96x96 layer takes
// the OpenBLAS path.
const std::string kWide = "    - {type: dense, units: 96, activation: relu}\n    - {type: dense, units: 96, activation: relu}\n";

bool same_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

TEST_CASE("member 5 trained alone equals member 5 of a swarm of 8, bitwise, on every SIMD target") {
  for (CpuTarget target : targets_here()) {
    CAPTURE(std::string(to_string(target)));
    const TrainOutput swarm = run(spirals_yaml(8, 0, kHidden, kRest), 2, target);
    const TrainOutput alone = run(spirals_yaml(1, 5, kHidden, kRest), 1, target);
    const auto a = member_params(swarm, swarm.params, 5), b = member_params(alone, alone.params, 0);
    REQUIRE(a.size() == b.size());
    CHECK(same_bits(a.data(), b.data(), a.size()));
    CHECK(member_params(swarm, swarm.init_params, 5) == member_params(alone, alone.init_params, 0));
    const int E = swarm.epochs;
    CHECK(same_bits(&swarm.train_loss[5 * E], &alone.train_loss[0], E));
    CHECK(same_bits(&swarm.val_loss[5 * E], &alone.val_loss[0], E));
    const std::size_t per = static_cast<std::size_t>(swarm.pred_n) * 2;
    CHECK(same_bits(&swarm.pred_members[5 * per], &alone.pred_members[0], per));
    // Members differ from each other (different init and bootstrap resamples).
    CHECK(member_params(swarm, swarm.params, 4) != a);
  }
}

TEST_CASE("results do not depend on the thread count, bitwise, on every SIMD target") {
  for (CpuTarget target : targets_here())
  for (const std::string& hidden : {kHidden, kWide}) {
    CAPTURE(std::string(to_string(target)));
    const std::string yaml = spirals_yaml(6, 0, hidden, kRest);
    const TrainOutput one = run(yaml, 1, target), two = run(yaml, 2, target);
    CHECK(same_bits(one.params.data(), two.params.data(), one.params.size()));
    CHECK(same_bits(one.train_loss.data(), two.train_loss.data(), one.train_loss.size()));
    CHECK(same_bits(one.pred_members.data(), two.pred_members.data(), one.pred_members.size()));
  }
}

TEST_CASE("SIMD targets agree up to rounding: the same training on every target") {
  // Targets differ in vector width (the order of some sums) and in fused multiply-adds, so
  // their results differ in the last bits, and training carries such differences along
  // without amplifying them far over a few epochs. Bound: parameters within 1e-3 relative
  // (to 1e-3 absolute near zero) of the first target's, final losses within 1e-4 relative.
  const std::vector<CpuTarget> targets = targets_here();
  if (targets.size() < 2) {
    MESSAGE("SKIPPED: this CPU runs one SIMD target only");
    return;
  }
  for (const std::string& hidden : {kHidden, kWide}) {
    const std::string yaml = spirals_yaml(6, 0, hidden, kRest);
    const TrainOutput ref = run(yaml, 2, targets.front());
    for (std::size_t i = 1; i < targets.size(); ++i) {
      CAPTURE(std::string(to_string(targets[i])));
      const TrainOutput t = run(yaml, 2, targets[i]);
      REQUIRE(t.params.size() == ref.params.size());
      double worst = 0, worst_loss = 0;
      for (std::size_t k = 0; k < t.params.size(); ++k)
        worst = std::max(worst, std::abs(double(t.params[k]) - ref.params[k]) / (1e-3 + std::abs(double(ref.params[k]))));
      const int E = t.epochs;
      for (int s = 0; s < 6; ++s) {
        const double a = t.train_loss[s * E + E - 1], b = ref.train_loss[s * E + E - 1];
        worst_loss = std::max(worst_loss, std::abs(a - b) / std::abs(b));
      }
      MESSAGE(std::string(to_string(targets[i])) << " vs " << std::string(to_string(targets.front()))
                                                 << ": largest parameter difference " << worst
                                                 << " (relative), final loss " << worst_loss);
      CHECK(worst < 1e-3);
      CHECK(worst_loss < 1e-4);
    }
  }
}

namespace {

// Independent double-precision full-batch reference: 2 -> H (tanh) -> 2, softmax
// cross-entropy, Adam (PyTorch formulas), for `steps` steps from the given parameters.
struct RefNet {
  int H;
  std::vector<double> W1, b1, W2, b2;  // W1 [2,H], W2 [H,2]
};

void ref_adam_train(RefNet& n, const std::vector<float>& X, const std::vector<float>& y, int steps, double lr) {
  const int N = static_cast<int>(y.size()), H = n.H;
  std::vector<double*> P = {n.W1.data(), n.b1.data(), n.W2.data(), n.b2.data()};
  std::vector<std::size_t> sizes = {n.W1.size(), n.b1.size(), n.W2.size(), n.b2.size()};
  std::vector<std::vector<double>> m(4), v(4), g(4);
  for (int t = 0; t < 4; ++t) m[t].assign(sizes[t], 0), v[t].assign(sizes[t], 0);
  for (int step = 1; step <= steps; ++step) {
    for (int t = 0; t < 4; ++t) g[t].assign(sizes[t], 0);
    for (int i = 0; i < N; ++i) {
      std::vector<double> a(H), z2(2, 0);
      for (int h = 0; h < H; ++h) a[h] = std::tanh(X[2 * i] * n.W1[h] + X[2 * i + 1] * n.W1[H + h] + n.b1[h]);
      for (int o = 0; o < 2; ++o) {
        z2[o] = n.b2[o];
        for (int h = 0; h < H; ++h) z2[o] += a[h] * n.W2[h * 2 + o];
      }
      const double mx = std::max(z2[0], z2[1]);
      const double e0 = std::exp(z2[0] - mx), e1 = std::exp(z2[1] - mx);
      double d2[2] = {e0 / (e0 + e1), e1 / (e0 + e1)};
      d2[static_cast<int>(y[i])] -= 1.0;
      for (int o = 0; o < 2; ++o) {
        d2[o] /= N;
        g[3][o] += d2[o];
        for (int h = 0; h < H; ++h) g[2][h * 2 + o] += a[h] * d2[o];
      }
      for (int h = 0; h < H; ++h) {
        const double dz = (d2[0] * n.W2[h * 2] + d2[1] * n.W2[h * 2 + 1]) * (1 - a[h] * a[h]);
        g[1][h] += dz;
        g[0][h] += X[2 * i] * dz;
        g[0][H + h] += X[2 * i + 1] * dz;
      }
    }
    for (int t = 0; t < 4; ++t)
      for (std::size_t k = 0; k < sizes[t]; ++k) {
        m[t][k] = 0.9 * m[t][k] + 0.1 * g[t][k];
        v[t][k] = 0.999 * v[t][k] + 0.001 * g[t][k] * g[t][k];
        const double mh = m[t][k] / (1 - std::pow(0.9, step)), vh = v[t][k] / (1 - std::pow(0.999, step));
        P[t][k] -= lr * mh / (std::sqrt(vh) + 1e-8);
      }
  }
}

}  // namespace

TEST_CASE("a member matches an independent double-precision re-implementation from its init params") {
  const std::string yaml =
      "seed: 3\nswarm: {size: 4, first_member: 10}\nmodel:\n  layers:\n"
      "    - {type: dense, units: 6, activation: tanh}\n    - {type: dense, units: 2}\n"
      "loss: cross_entropy\noptimizer: {type: adam, lr: 0.01}\n"
      "data:\n  source: {type: spirals, n: 64}\ntrain: {epochs: 15, batch_size: 1000, shuffle: false}\n";
  const Config cfg = parse_config(yaml, "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CpuBackend be(2);
  const TrainOutput t = train_swarm(cfg, data, be, nullptr);
  double max_err = 0;
  for (int s = 0; s < 4; ++s) {
    const auto init = member_params(t, t.init_params, s), fin = member_params(t, t.params, s);
    RefNet n{6, {}, {}, {}, {}};
    n.W1.assign(init.begin(), init.begin() + 12);
    n.b1.assign(init.begin() + 12, init.begin() + 18);
    n.W2.assign(init.begin() + 18, init.begin() + 30);
    n.b2.assign(init.begin() + 30, init.begin() + 32);
    ref_adam_train(n, data.train.X, data.train.y, 15, 0.01);
    std::vector<double> ref = n.W1;
    for (const auto* v : {&n.b1, &n.W2, &n.b2}) ref.insert(ref.end(), v->begin(), v->end());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double err = std::abs(fin[i] - ref[i]) / (1e-3 + std::abs(ref[i]));
      max_err = std::max(max_err, err);
    }
  }
  MESSAGE("max relative parameter error after 15 Adam steps: " << max_err);
  CHECK(max_err < 1e-3);
}

TEST_CASE("end to end: 16 members learn the spirals (>= 95% training accuracy for most)") {
  const std::string yaml =
      "seed: 0\nswarm: {size: 16}\nmodel:\n  layers:\n"
      "    - {type: dense, units: 32, activation: tanh}\n    - {type: dense, units: 32, activation: tanh}\n"
      "    - {type: dense, units: 2}\nloss: cross_entropy\noptimizer: {type: adam, lr: 0.01}\n"
      "data:\n  source: {type: spirals, n: 256, noise: 0.05}\ntrain: {epochs: 400, batch_size: 64}\n";
  const TrainOutput t = run(yaml, 2);
  int good = 0;
  double lowest = 1;
  for (int s = 0; s < 16; ++s) {
    const float acc = t.train_acc[static_cast<std::size_t>(s) * t.epochs + t.epochs - 1];
    good += acc >= 0.95f;
    lowest = std::min<double>(lowest, acc);
  }
  MESSAGE(good << " of 16 members reached 95% training accuracy; lowest " << lowest);
  CHECK(good >= 12);
}
