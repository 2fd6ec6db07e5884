// Every independent error of a configuration reported in one run, sorted by position, with a
// count line; one error keeps its message, and errors that make later checks meaningless stop.
#include <doctest/doctest.h>

#include <string>

#include "config_test_util.h"

using namespace tn;
using namespace tn::test;

namespace {

// Where `part` is in `m` (npos fails the test).
std::size_t at(const std::string& m, const std::string& part) {
  const std::size_t p = m.find(part);
  CHECK_MESSAGE(p != std::string::npos, "'" << part << "' not in:\n" << m);
  return p;
}

std::size_t count_of(const std::string& m, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t p = m.find(part); p != std::string::npos; p = m.find(part, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("config errors: every independent error of a file is reported, sorted by line, with a count") {
  const std::string m = error_of(
      "train: {epochs: 0}\n"                                  // line 1: out of range
      "swarm: {sise: 4}\n"                                    // line 2: unknown key
      "model:\n"
      "  layers:\n"
      "    - {type: gru, units: x}\n"                          // line 5: not a number
      "    - {units: 2, activaton: relu}\n"                   // line 6: unknown key, in the next layer
      "data:\n"
      "  source: spirals\n"
      "optimizer: {type: adam, lr: -1, beta1: 2}\n"           // line 9: two bad values
      "schedule: {type: cosin}\n"                             // line 10: unknown value
      "optimiser: {lr: 0.1}\n");                              // line 11: unknown section
  const std::size_t epochs = at(m, "cfg.yaml:1:17: train.epochs: value 0 is out of range; expected an integer >= 1");
  const std::size_t swarm = at(m, "cfg.yaml:2:9: swarm.sise: unknown key; allowed: size, first_member; did you mean 'size'?");
  const std::size_t units = at(m, "cfg.yaml:5:26: model.layers[0].units: expected an integer, got 'x'");
  const std::size_t layer = at(m, "cfg.yaml:6:18: model.layers[1].activaton: unknown key");
  const std::size_t lr = at(m, "cfg.yaml:9:29: optimizer.lr: value -1 is out of range; expected a number > 0");
  const std::size_t beta1 = at(m, "cfg.yaml:9:40: optimizer.beta1: value 2 is out of range");
  const std::size_t schedule = at(m, "cfg.yaml:10:18: schedule.type: unknown value 'cosin'");
  const std::size_t section = at(m, "cfg.yaml:11:1: optimiser: unknown key");
  CHECK(epochs < swarm);
  CHECK(swarm < units);
  CHECK(units < layer);
  CHECK(layer < lr);
  CHECK(lr < beta1);
  CHECK(beta1 < schedule);
  CHECK(schedule < section);
  CHECK(m.substr(m.rfind('\n') + 1) == "8 errors in cfg.yaml");
  CHECK(count_of(m, "\n") == 8);  // one line per error, then the count
}

TEST_CASE("config errors: one error keeps its message, without a count line") {
  CHECK(error_of(with("optimizer: {lr: abc}\n")) == "cfg.yaml:6:17: optimizer.lr: expected a number, got 'abc'");
  CHECK(error_of(with("train: {epochs: 3, zzzzzz: 1}\n")) ==
        "cfg.yaml:6:20: train.zzzzzz: unknown key; allowed: epochs, batch_size, shuffle, log_every, early_stopping, "
        "checkpoint, tensorboard, tensorboard_runs");
}

TEST_CASE("config errors: a YAML syntax error is reported once, whatever else is wrong") {
  const std::string m = error_of("swarm: {sise: 4}\nmodel: [1, 2\nseed: x\n");
  CHECK_HAS(m, "invalid YAML");
  CHECK(m.find("sise") == std::string::npos);
  CHECK(m.find("errors in") == std::string::npos);
  CHECK(count_of(m, "\n") == 0);
}

TEST_CASE("config errors: --set errors come after the file's, in the order given") {
  const std::string m = error_of(with("train: {epochs: 0}\n"), {{"optimizer.lr", "-1"}, {"swarm.size", "0"}});
  const std::size_t file = at(m, "cfg.yaml:6:17: train.epochs: value 0 is out of range");
  const std::size_t swarm = at(m, "--set swarm.size=0: swarm.size: value 0 is out of range");
  const std::size_t lr = at(m, "--set optimizer.lr=-1: optimizer.lr: value -1 is out of range");
  CHECK(file < swarm);  // the swarm is read before the optimizer
  CHECK(swarm < lr);
  CHECK_HAS(m, "\n3 errors in cfg.yaml");
}

TEST_CASE("config errors: a check that needs a refused value or section is not judged on the default") {
  // nesterov needs momentum > 0: with momentum refused, only that is reported.
  CHECK(error_of(with("optimizer: {type: sgd, nesterov: true, momentum: abc}\n")) ==
        "cfg.yaml:6:50: optimizer.momentum: expected a number, got 'abc'");
  // The ensemble's metric depends on the loss: a refused loss leaves the ensemble unjudged.
  const std::string m = error_of(with("loss: {type: mse, zz: 1}\nensemble: {select: top, k: 1, metric: accuracy}\n"));
  CHECK_HAS(m, "loss.zz: unknown key");
  CHECK(m.find("ensemble") == std::string::npos);
  // A missing required section stops its own reading only; the other sections are still read.
  const std::string n = error_of("data: {source: spirals}\ntrain: {epochs: 0}\n");
  CHECK_HAS(n, "model: missing required key");
  CHECK_HAS(n, "train.epochs: value 0 is out of range");
  CHECK_HAS(n, "2 errors in cfg.yaml");
}
