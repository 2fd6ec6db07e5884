// Per-member hyperparameters: reading ({values}, {linspace}, {logspace}, grid), errors,
// round trips, and training: member k of a sweep equals member k trained alone with its
// value as a plain number, bitwise.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "config_test_util.h"
#include "data/prepare.h"
#include "train/trainer.h"

using namespace tn;
using namespace tn::test;

namespace {

std::string swarm(int S) { return "swarm: {size: " + std::to_string(S) + "}\n"; }

}  // namespace

TEST_CASE("member values: logspace, linspace and values, member k takes value k mod n") {
  Config c = parse(swarm(4) + "optimizer: {type: sgd, lr: {logspace: [1.0e-4, 1.0e-1]}, momentum: {values: [0, 0.9]}}\n"
                             "model: {init_scale: {linspace: [0.5, 2]}, layers: [{units: 2}]}\ndata: {source: spirals}\n");
  const MemberValues* lr = find_member_values(c, "optimizer.lr");
  REQUIRE(lr);
  CHECK(lr->count() == 4);  // num defaults to the swarm size
  CHECK(lr->value(0) == 1e-4);
  CHECK(lr->value(1) == doctest::Approx(1e-3).epsilon(1e-5));
  CHECK(lr->value(2) == doctest::Approx(1e-2).epsilon(1e-5));
  CHECK(lr->value(3) == 1e-1);
  CHECK(member_optimizer(c, 2).lr == lr->value(2));
  CHECK(member_optimizer(c, 0).momentum == 0.0);
  CHECK(member_optimizer(c, 3).momentum == 0.9);  // 3 mod 2
  CHECK(member_init_scale(c, 0) == 0.5);
  CHECK(member_init_scale(c, 1) == 1.0);
  CHECK(member_init_scale(c, 3) == 2.0);
  CHECK(c.optimizer.lr == 1e-4);  // the scalar holds the first value
  // Members keep their value when trained as a slice of the swarm.
  Config slice = parse(with("swarm: {size: 1, first_member: 2}\n"
                            "optimizer: {type: sgd, lr: {logspace: [1.0e-4, 1.0e-1], num: 4}, momentum: 0.9}\n"));
  CHECK(member_optimizer(slice, 2).lr == lr->value(2));
  // Round trip through the stored YAML.
  check_same(c, parse(to_yaml(c)));
  CHECK_HAS(to_yaml(c), "lr: {logspace: [1.0e-04, 0.1], num: 4}");
}

TEST_CASE("member values: a grid is the cartesian product, first key slowest") {
  const Config c = parse(with(swarm(12) + "optimizer: {lr: {values: [0.1, 0.01, 0.001]}, weight_decay: {values: [0, 0.5]}}\n"
                                          "grid: [optimizer.lr, optimizer.weight_decay]\n"));
  // 6 combinations, repeated twice over 12 members.
  for (int k = 0; k < 12; ++k) {
    const OptimizerConfig o = member_optimizer(c, k);
    CHECK(o.lr == std::vector<double>{0.1, 0.01, 0.001}[(k / 2) % 3]);
    CHECK(o.weight_decay == std::vector<double>{0, 0.5}[k % 2]);
  }
  check_same(c, parse(to_yaml(c)));
}

TEST_CASE("member values: errors name the key and the fix") {
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {values: [0.1], linspace: [1, 2]}}\n")), "give exactly one of values");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {logspace: [0, 1]}}\n")), "optimizer.lr.logspace[0]");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {values: [0.1, -1]}}\n")), "optimizer.lr.values[1]");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {linspace: [-1, 1]}}\n")), "optimizer.lr.linspace[0]: value -1 is out of range");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {beta1: {logspace: [0.5, 1]}}\n")),
            "value 1 (number 3) is outside the allowed range in [0, 1)");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {valeus: [0.1]}}\n")), "did you mean 'values'");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {values: [0.1, 0.2, 0.3]}}\n")),
            "optimizer.lr has 3 values, which do not divide the swarm of 4 members evenly");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {values: [0.1, 0.2]}}\ngrid: [optimizer.lr, optimizer.eps]\n")),
            "'optimizer.eps' has no per-member values");
  CHECK_HAS(error_of(with(swarm(4) + "optimizer: {lr: {values: [0.1, 0.2]}}\ngrid: [optimizer.lr]\n")),
            "at least two per-member keys");
  CHECK_HAS(error_of(with(swarm(6) + "optimizer: {lr: {values: [0.1, 0.2]}, eps: {logspace: [1.0e-8, 1.0e-6], num: 2}}\n"
                                     "grid: [optimizer.lr, optimizer.eps]\n")),
            "the grid has 4 combinations");
  CHECK_HAS(error_of(with(swarm(2) + "optimizer: {type: sgd, nesterov: true, momentum: {values: [0, 0.9]}}\n")),
            "nesterov needs momentum > 0");
}

TEST_CASE("member values: member k of a sweep equals member k trained alone with its value, bitwise") {
  const std::string common =
      "seed: 3\nschedule: {type: cosine, warmup_epochs: 1}\n"
      "data:\n  source: {type: spirals, n: 96}\n  per_member: bootstrap\ntrain: {epochs: 4, batch_size: 16}\n";
  const std::string swept = common + "swarm: {size: 8}\n"
      "optimizer: {type: adamw, lr: {logspace: [1.0e-3, 1.0e-1], num: 4}, weight_decay: {values: [0, 0.01]}, "
      "beta1: {values: [0.9, 0.8, 0.9, 0.7]}}\n"
      "model:\n  init_scale: {values: [1, 0.5, 2, 1.5, 1, 1, 1, 0.25]}\n"
      "  layers:\n    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n"
      "grid: [optimizer.lr, optimizer.weight_decay]\n";
  const Config cfg = parse_config(swept, "sweep");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CpuBackend be(2);
  const TrainOutput all = train_swarm(cfg, data, be, nullptr);
  for (int k : {0, 3, 5, 7}) {
    CAPTURE(k);
    const OptimizerConfig o = member_optimizer(cfg, k);
    char alone_opt[256];
    std::snprintf(alone_opt, sizeof alone_opt, "optimizer: {type: adamw, lr: %.17g, weight_decay: %.17g, beta1: %.17g}\n",
                  o.lr, o.weight_decay, o.beta1);
    char scale[64];
    std::snprintf(scale, sizeof scale, "%.17g", member_init_scale(cfg, k));
    const std::string alone_yaml = common + "swarm: {size: 1, first_member: " + std::to_string(k) + "}\n" + alone_opt +
        "model:\n  init_scale: " + scale + "\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n";
    const TrainOutput one = train_swarm(parse_config(alone_yaml, "alone"), data, be, nullptr);
    for (std::size_t t = 0; t < all.layout.size.size(); ++t) {
      const auto n = static_cast<std::size_t>(all.layout.size[t]);
      CHECK(std::memcmp(all.init_params.data() + all.layout.at(static_cast<int>(t), k),
                        one.init_params.data() + one.layout.at(static_cast<int>(t), 0), n * sizeof(float)) == 0);
      CHECK(std::memcmp(all.params.data() + all.layout.at(static_cast<int>(t), k),
                        one.params.data() + one.layout.at(static_cast<int>(t), 0), n * sizeof(float)) == 0);
    }
  }
  // The values matter: members with another learning rate end elsewhere.
  CHECK(all.train_loss[0 * 4 + 3] != all.train_loss[2 * 4 + 3]);
}

TEST_CASE("member values: a grid with more combinations than a swarm can have members is refused") {
  // Four keys of 65536 values: 2^64 combinations overflowed the product (SIGFPE), and with
  // first_member > 0 a stride of 0 divided by zero in MemberValues::at.
  std::string opt = "optimizer: {type: adam";
  for (const char* key : {"lr", "beta1", "beta2", "eps"})
    opt += std::string(", ") + key + ": {linspace: [0.1, 0.2], num: 65536}";
  const std::string grid = opt + "}\ngrid: [optimizer.lr, optimizer.beta1, optimizer.beta2, optimizer.eps]\n";
  for (const char* s : {"swarm: {size: 4}\n", "swarm: {size: 4, first_member: 1}\n"}) {
    const std::string msg = error_of(with(s + grid));
    CHECK_HAS(msg, "cfg.yaml:");
    CHECK_HAS(msg, "grid: the grid has 65536 (optimizer.lr) x 65536 (optimizer.beta1) x 65536 (optimizer.beta2) x "
                   "65536 (optimizer.eps) combinations, more than the 2147483647 members a swarm can have; "
                   "give its keys fewer values");
  }
  // 2^31 combinations: one more than the largest swarm.
  CHECK_HAS(error_of(with("swarm: {size: 2, first_member: 5}\noptimizer: {lr: {linspace: [0.1, 0.2], num: 65536}, "
                          "eps: {logspace: [1.0e-8, 1.0e-6], num: 32768}}\ngrid: [optimizer.lr, optimizer.eps]\n")),
            "the grid has 65536 (optimizer.lr) x 32768 (optimizer.eps) combinations");
  // Just below: a slice of the sweep near its end.
  const Config c = parse(with("swarm: {size: 2, first_member: 2147441938}\n"
                              "optimizer: {lr: {linspace: [0.1, 0.2], num: 46341}, eps: {logspace: [1.0e-8, 1.0e-6], num: 46340}}\n"
                              "grid: [optimizer.lr, optimizer.eps]\n"));
  const long long last = 46341ll * 46340 - 1;
  CHECK(member_optimizer(c, last).lr == 0.2);
  CHECK(member_optimizer(c, last).eps == 1e-6);
  CHECK(member_optimizer(c, last - 46340).lr < 0.2);
  CHECK(member_optimizer(c, last - 46340).eps == 1e-6);
}

TEST_CASE("member values: a large num costs nothing while parsing, values are computed per member") {
  // num: 2e9 spent about two minutes and 16 GB building every value before a member used one.
  const auto t0 = std::chrono::steady_clock::now();
  const Config c = parse(with("swarm: {size: 3, first_member: 1999999997}\n"
                              "optimizer: {lr: {logspace: [1.0e-5, 1.0e-1], num: 2000000000}, "
                              "momentum: {linspace: [0.5, 0.99], num: 2000000000}, type: sgd, nesterov: true}\n"));
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.0);
  const MemberValues* lr = find_member_values(c, "optimizer.lr");
  REQUIRE(lr);
  CHECK(lr->count() == 2000000000);
  CHECK(member_optimizer(c, 1999999999).lr == 1e-1);
  CHECK(member_optimizer(c, 1999999998).lr == doctest::Approx(1e-1));
  CHECK(member_optimizer(c, 0).lr == 1e-5);
  check_same(c, parse(to_yaml(c)));
  // Every value is still checked: the message names the first one outside the range.
  CHECK_HAS(error_of(with("swarm: {size: 4}\noptimizer: {beta1: {logspace: [0.5, 1], num: 3}}\n")),
            "optimizer.beta1.logspace: value 1 (number 2) is outside the allowed range in [0, 1)");
  CHECK_HAS(error_of(with("swarm: {size: 4}\noptimizer: {beta1: {linspace: [0.5, 0.9999999], num: 1000000000}}\n")),
            "optimizer.beta1.linspace: value 1 (number 999999199) is outside the allowed range in [0, 1)");
  CHECK_HAS(error_of(with("swarm: {size: 2}\noptimizer: {type: sgd, nesterov: true, momentum: {linspace: [0.9, 0], num: 2}}\n")),
            "nesterov needs momentum > 0");
}

TEST_CASE("member values: values computed per member are those printed with %.6g and read back") {
  for (const auto& [log, lo, hi, num] : std::vector<std::tuple<bool, double, double, int>>{
           {true, 1e-4, 1e-1, 7}, {true, 3e-3, 2e-7, 1000}, {false, 0, 0.99, 17}, {false, -2.5, 3.125, 1001},
           {false, 0.1, 0.1, 3}, {true, 1, 1, 1}}) {
    MemberValues mv;
    mv.form = log ? MemberValues::Form::Logspace : MemberValues::Form::Linspace;
    mv.lo = lo;
    mv.hi = hi;
    mv.num = num;
    for (int i = 0; i < num; ++i) {
      const double t = num == 1 ? 0.0 : static_cast<double>(i) / (num - 1);
      const double x = log ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))) : lo + t * (hi - lo);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", x);
      const double expected = i == 0 ? lo : i == num - 1 ? hi : std::stod(buf);
      CAPTURE(i);
      CHECK(mv.value(i) == expected);
    }
  }
  // The message names the first value outside the range, as when every value was built.
  for (const auto& [form, lo, hi] : std::vector<std::tuple<std::string, double, double>>{
           {"linspace", 0.9999, 0.99999995}, {"linspace", 0.99999995, 0.9999}, {"logspace", 0.9999, 0.99999995},
           {"logspace", 0.99999999, 0.9999}}) {
    const int num = 5000;
    int first = -1;
    for (int i = 0; i < num && first < 0; ++i) {
      const double t = static_cast<double>(i) / (num - 1);
      const double x = form == "logspace" ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))) : lo + t * (hi - lo);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", x);
      const double v = i == 0 ? lo : i == num - 1 ? hi : std::stod(buf);
      if (!(v < 1)) first = i;
    }
    REQUIRE(first > 0);
    char yaml[160];
    std::snprintf(yaml, sizeof yaml, "swarm: {size: 5000}\noptimizer: {beta1: {%s: [%.17g, %.17g], num: %d}}\n", form.c_str(), lo,
                  hi, num);
    CHECK_HAS(error_of(with(yaml)), "value 1 (number " + std::to_string(first) + ") is outside the allowed range");
  }
}

TEST_CASE("sub_swarm: a block keeps its members' global indices, a list renumbers them and gathers their values") {
  Config c = parse(swarm(6) + "optimizer: {type: sgd, lr: {values: [1, 2, 3]}, momentum: {values: [0, 0.5]}}\n"
                             "grid: [optimizer.lr, optimizer.momentum]\nmodel: {layers: [{units: 2}]}\n"
                             "data: {source: spirals}\n");
  c.swarm.first_member = 10;  // as in a shard: members 10 .. 15
  const Config block = sub_swarm(c, 2, 5);
  CHECK(block.swarm.first_member == 12);
  CHECK(block.swarm.size == 3);
  CHECK(block.swarm.members.empty());
  CHECK(block.grid == c.grid);
  for (int s = 0; s < 3; ++s) CHECK(member_optimizer(block, 12 + s).lr == member_optimizer(c, 12 + s).lr);

  const std::vector<int> picked = {1, 4, 5};
  const Config list = sub_swarm(c, picked);
  CHECK(list.swarm.first_member == 0);
  CHECK(list.swarm.size == 3);
  CHECK(list.swarm.members == std::vector<int>{11, 14, 15});
  CHECK(list.grid.empty());
  for (int s = 0; s < 3; ++s) {
    CHECK(member_optimizer(list, s).lr == member_optimizer(c, 10 + picked[s]).lr);
    CHECK(member_optimizer(list, s).momentum == member_optimizer(c, 10 + picked[s]).momentum);
  }
  // A list of a list keeps the outer global indices; a block of it slices them.
  CHECK(sub_swarm(list, std::vector<int>{0, 2}).swarm.members == std::vector<int>{11, 15});
  CHECK(sub_swarm(list, 1, 3).swarm.members == std::vector<int>{14, 15});
}
