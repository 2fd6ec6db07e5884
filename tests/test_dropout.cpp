// Dropout (model.layers[i].dropout) and the other regularizers of a training run, end to end
// through the trainer: member k alone equals member k in the swarm bitwise on every SIMD
// target, dropout acts at training only (validation and predictions see the plain network),
// and the config keys. The op itself is in the op table (tests/op_table.cpp); its gradients
// in tests/test_dense_grad.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "config_test_util.h"
#include "data/prepare.h"
#include "model/model_ops.h"
#include "target_test_util.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;
using namespace tn::test;

namespace {

std::string yaml(int S, int first, double dropout, const std::string& loss, const std::string& opt) {
  const std::string d = dropout > 0 ? ", dropout: " + std::to_string(dropout) : "";
  return "name: t\nseed: 7\nswarm: {size: " + std::to_string(S) + ", first_member: " + std::to_string(first) +
         "}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh" + d +
         "}\n    - {type: dense, units: 8, activation: relu" + d + "}\n    - {type: dense, units: 2}\n" +
         "loss: " + loss + "\noptimizer: " + opt + "\n" +
         "data:\n  source: {type: spirals, n: 100}\n  split: {train: 0.8, val: 0.1, test: 0.1}\n"
         "  per_member: bootstrap\ntrain: {epochs: 4, batch_size: 16, shuffle: true}\n";
}

TrainOutput run(const std::string& text, int threads, CpuTarget target = default_cpu_target()) {
  const Config cfg = parse_config(text, "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CpuBackend be(threads, target);
  return train_swarm(cfg, data, be, nullptr);
}

bool same_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

TEST_CASE("dropout with class weights and l1: member 3 alone equals member 3 of a swarm of 6, bitwise, on every target") {
  const std::string opt = "{type: adam, lr: 0.01, l1: 1.0e-3, grad_clip: 1.0}";
  // Plain cross_entropy takes the fused lane kernel (dropout inside it), class weights the
  // separate ops.
  for (const char* loss : {"cross_entropy", "{type: cross_entropy, class_weights: balanced}"})
  for (CpuTarget target : targets_here()) {
    CAPTURE(std::string(to_string(target)));
    CAPTURE(std::string(loss));
    const TrainOutput swarm = run(yaml(6, 0, 0.3, loss, opt), 2, target);
    const TrainOutput alone = run(yaml(1, 3, 0.3, loss, opt), 1, target);
    const bool weighted = std::string(loss).find("balanced") != std::string::npos;
    CHECK(swarm.kernel.find(weighted ? "separate ops" : "fused step") != std::string::npos);
    const auto a = member_params(swarm, swarm.params, 3), b = member_params(alone, alone.params, 0);
    REQUIRE(a.size() == b.size());
    CHECK(same_bits(a.data(), b.data(), a.size()));
    const int E = swarm.epochs;
    CHECK(same_bits(&swarm.train_loss[3 * E], &alone.train_loss[0], E));
    CHECK(same_bits(&swarm.val_loss[3 * E], &alone.val_loss[0], E));
    CHECK(member_params(swarm, swarm.params, 2) != a);
  }
}

TEST_CASE("dropout acts while training only: the recorded validation loss is the network's without it") {
  const Config cfg = parse_config(yaml(3, 0, 0.5, "cross_entropy", "{type: adam, lr: 0.01}"), "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CpuBackend be(1);
  const TrainOutput out = train_swarm(cfg, data, be, nullptr);
  const int n = data.val.n, O = out.shape.outputs(), E = out.epochs, F = out.shape.inputs();
  REQUIRE(n > 0);
  ModelBuffers buf(be, out.shape, 1, n, 1);
  std::copy(data.val.X.begin(), data.val.X.end(), buf.X);
  std::copy(data.val.y.begin(), data.val.y.end(), buf.Y);
  REQUIRE(data.val.X.size() == static_cast<std::size_t>(n) * F);
  const std::uint32_t epoch = 0;
  DropoutKey drop;
  drop.seed = cfg.seed;
  drop.epoch = &epoch;
  for (int s = 0; s < 3; ++s) {
    const BlockParams p(const_cast<float*>(out.params.data()), out.layout, s);
    double plain = 0, dropped = 0, correct = 0;
    be.loss_forward(cfg.loss, 1, n, O, model_forward(be, out.shape, p, buf, 1, n), static_cast<std::int64_t>(n) * O,
                    buf.Y, n, &plain, &correct, nullptr);
    drop.member0 = static_cast<std::uint32_t>(s);
    be.loss_forward(cfg.loss, 1, n, O, model_forward(be, out.shape, p, buf, 1, n, &drop),
                    static_cast<std::int64_t>(n) * O, buf.Y, n, &dropped, &correct, nullptr);
    INFO("member ", s, ": recorded ", out.val_loss[s * E + E - 1], ", without dropout ", plain / n, ", with ", dropped / n);
    CHECK(out.val_loss[s * E + E - 1] == doctest::Approx(plain / n).epsilon(1e-5));
    CHECK(std::fabs(dropped - plain) / n > 1e-3);  // the check could tell the two apart
  }
}

TEST_CASE("config: model.layers[i].dropout is read, checked and written back") {
  const std::string base = "data:\n  source: spirals\nmodel:\n  layers:\n";
  const Config c = parse(base + "    - {units: 16, activation: relu, dropout: 0.25}\n    - {units: 2}\n");
  CHECK(c.model.layers[0].dropout == 0.25);
  const std::string text = to_yaml(c);
  CHECK(text.find("dropout: 0.25") != std::string::npos);
  CHECK(to_yaml(parse_config(text, "again")) == text);
  CHECK(to_yaml(parse(base + "    - {units: 2}\n")).find("dropout") == std::string::npos);
  CHECK_HAS(error_of(base + "    - {units: 16, dropout: 1}\n    - {units: 2}\n"), "dropout");
  CHECK_HAS(error_of(base + "    - {units: 16, dropout: -0.1}\n    - {units: 2}\n"), "dropout");
  CHECK_HAS(error_of(base + "    - {units: 16}\n    - {units: 2, dropout: 0.5}\n"), "output layer");
  // l1 next to weight_decay, also per member.
  const Config l1 = parse(base + "    - {units: 2}\nswarm: {size: 2}\noptimizer: {type: sgd, l1: {values: [0, 0.01]}}\n");
  CHECK(member_optimizer(l1, 1).l1 == 0.01);
  CHECK(to_yaml(parse_config(to_yaml(l1), "again")) == to_yaml(l1));
  CHECK_HAS(error_of(base + "    - {units: 2}\noptimizer: {type: adam, l1: -1}\n"), "l1");
}
