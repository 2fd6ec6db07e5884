// `turbanet export`: onnxruntime runs the exported graphs of every shipped config (and of
// every activation, loss and recurrent cell) and reproduces `turbanet predict` or the
// predictions training stored (scripts/check_export.py, in the .venv-test environment of
// scripts/install-test-venv.sh); onnx.checker accepts every file; bad requests exit 2 and
// write nothing; the .npy writer's headers.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "cli/commands/commands.h"
#include "eval_test_util.h"
#include "export/npz.h"
#include "io/run_file.h"
#include "python_test_util.h"

using namespace evaltest;

namespace {

using tn::test::export_python;

tn::ExportOptions export_opts(const fs::path& run, const fs::path& out) {
  tn::ExportOptions o;
  o.run_path = run.string();
  o.out = out.string();
  o.verbosity = tn::Verbosity::Quiet;
  return o;
}

// configs/<name>.yaml with `set` trained into export-<tag, default name>.h5.
fs::path train_config(const std::string& name, const std::vector<std::string>& set, const std::string& tag = "") {
  return tn::test::train_quietly(name, fs::path(TURBANET_SOURCE_DIR) / "configs" / (name + ".yaml"), set,
                                 scratch("export-" + (tag.empty() ? name : tag) + ".h5"));
}

std::string spirals_with(const std::string& layers, const std::string& loss) {
  return "name: acts\nseed: 1\nswarm: {size: 5}\nmodel:\n  layers:\n" + layers + "loss: " + loss +
         "\ndata:\n  source: {type: spirals, n: 200}\n  split: {train: 0.7, val: 0.1, test: 0.2}\n"
         "  normalize: standard\ntrain: {epochs: 2, batch_size: 32}\n";
}

}  // namespace

TEST_CASE("export: onnxruntime reproduces predict and the stored predictions for every shipped config") {
  const std::string python = export_python();
  if (python.empty()) {
    MESSAGE("SKIPPED: no .venv-test with onnxruntime and onnx; run scripts/install-test-venv.sh "
            "(scripts/test.sh does)");
    return;
  }
  // One epoch, fewer members: the exported graph must match whatever the weights are.
  const std::map<std::string, std::vector<std::string>> reduced = {
      {"fashion-mnist-ensemble", {"swarm.size=3", "train.epochs=1", "train.batch_size=256"}},
      {"fashion-mnist-quick", {"swarm.size=2", "train.batch_size=256"}},
      {"iris", {"train.epochs=1"}},
      {"random-walk", {"swarm.size=5", "data.source.series=5", "train.epochs=1"}},
      {"spirals", {"train.epochs=1"}},
      {"spirals-large", {"swarm.size=4", "train.epochs=1"}},
      {"spirals-small", {"swarm.size=4", "train.epochs=1"}},
      {"spirals-halving", {"swarm.size=8", "optimizer.lr.num=2", "train.epochs=5", "search.rungs=[2, 3]"}},
      {"spirals-pbt", {"swarm.size=8", "train.epochs=5", "search.every_epochs=2"}},
      {"spirals-widths", {"swarm.size=21", "train.epochs=1"}},
      {"stocks-lstm", {"swarm.size=5", "data.source.series=5", "train.epochs=1"}}};
  std::vector<std::string> runs;
  for (const auto& [name, path] : tn::test::shipped_configs(reduced)) {
    runs.push_back(train_config(name, reduced.at(name)).string());
  }
  // What the shipped configs leave out: GRU, stacked recurrent layers, every activation, bce.
  // (on the prices themselves, so that output_original, an affine map, is in the graph)
  runs.push_back(train_config("stocks-lstm", {"swarm.size=4", "data.source.series=4", "train.epochs=1",
                                              "model.layers.0.type=gru", "data.sequence.transform=none"}, "stocks-gru")
                     .string());
  // Members of different architectures: LSTM and GRU of two widths in one swarm.
  runs.push_back(train_config("stocks-lstm", {"swarm.size=4", "data.source.series=1", "data.source.length=200",
                                              "data.per_member=bootstrap", "data.normalize_per_member=false",
                                              "train.epochs=1", "model.layers.0.type={values: [lstm, gru]}",
                                              "model.layers.0.units={values: [3, 3, 5, 5]}"},
                              "stocks-mixed")
                     .string());
  runs.push_back(train_config("stocks-lstm", {"swarm.size=4", "data.source.series=4", "train.epochs=1",
                                              "model.layers=[{type: lstm, units: 6}, {type: gru, units: 5}, "
                                              "{type: dense, units: 4, activation: gelu}, {type: dense, units: 1}]"},
                                 "stocks-stacked")
                     .string());
  runs.push_back(train_run("acts-bce", spirals_with("    - {type: dense, units: 8, activation: gelu}\n"
                                                    "    - {type: dense, units: 8, activation: leaky_relu, leaky_slope: 0.2}\n"
                                                    "    - {type: dense, units: 8, activation: sigmoid}\n"
                                                    "    - {type: dense, units: 1}\n",
                                                    "bce"))
                     .string());
  runs.push_back(train_run("acts-mse", "name: sine\nseed: 2\nswarm: {size: 4}\nmodel:\n  layers:\n"
                                       "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 1}\n"
                                       "loss: mse\ndata:\n  source: {type: sine, n: 100}\n"
                                       "  split: {train: 0.8, val: 0.0, test: 0.2}\n  normalize: minmax\n  normalize_target: standard\n"
                                       "train: {epochs: 2, batch_size: 16}\n")
                     .string());
  // An ensemble selection (greedy, on the validation split) that picked a member more than
  // once: the graph and the archive hold the selected members with their weights.
  runs.push_back(train_run("select-greedy", "name: greedy\nseed: 2\nswarm: {size: 6}\nmodel:\n  layers:\n"
                                            "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n"
                                            "loss: cross_entropy\noptimizer: {type: adam, lr: 0.05}\n"
                                            "data:\n  source: {type: spirals, n: 300}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
                                            "  normalize: standard\n  per_member: bootstrap\ntrain: {epochs: 15, batch_size: 32}\n"
                                            "ensemble: {select: greedy, k: 8}\n")
                     .string());
  const std::vector<double> weights = tn::read_run_file(runs.back()).ensemble.weight;
  REQUIRE_MESSAGE(weights.size() > 1, "the selection should hold several members");
  REQUIRE_MESSAGE(weights.front() != weights.back(), "the selection should weigh its members differently");
  // A sequence ensemble (one series, bootstrap): one GRU node per member, a batched dense head.
  std::string csv = "day,price,vol\n";
  double price = 100;
  for (int t = 0; t < 200; ++t) {
    price += std::sin(t * 0.7) + 0.3 * std::cos(t * 1.3);
    csv += std::to_string(t) + "," + std::to_string(price) + "," + std::to_string(0.5 + 0.4 * std::sin(t * 0.31)) + "\n";
  }
  const fs::path series = write_file("export-series.csv", csv);
  runs.push_back(train_run("seq-ensemble", "name: seqens\nseed: 0\nswarm: {size: 3}\nmodel:\n  layers:\n"
                                           "    - {type: gru, units: 4}\n    - {type: dense, units: 1}\nloss: mse\n"
                                           "data:\n  source: {type: csv, path: " + series.string() + "}\n"
                                           "  split: {train: 0.7, val: 0.15, test: 0.15}\n  per_member: bootstrap\n"
                                           "  normalize: standard\n  sequence: {window: 5, horizon: 1, target: price, "
                                           "features: [price, vol], time: day}\ntrain: {epochs: 1, batch_size: 16}\n")
                     .string());
  std::string cmd = python + " " + TURBANET_SOURCE_DIR + "/scripts/check_export.py " + TURBANET_BINARY;
  for (const std::string& r : runs) cmd += " '" + r + "'";
  const std::string out = tn::test::run_command(cmd + " 2>&1");
  MESSAGE(out);
  CHECK_MESSAGE(out.find("\n0 failures") != std::string::npos, out);
  CHECK(out.find("FAIL") == std::string::npos);
  CHECK(out.find("onnx.checker accepts export-stocks-gru-m0.onnx") != std::string::npos);
  CHECK(out.find("ok   seq-ensemble ensemble: members vs /predictions/test/members") != std::string::npos);
  CHECK(out.find("ok   select-greedy npz: members/weight") != std::string::npos);
}

TEST_CASE("export: a bad request exits 2 with what to do and writes nothing") {
  const fs::path run = train_run("export-errors", spirals_yaml(3, 1));
  const fs::path out = scratch("export-errors.onnx");
  fs::remove(out);

  tn::ExportOptions o = export_opts(run, out);
  o.member = 7;
  auto [rc, err] = exit_and_stderr([&] { return tn::run_export(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_MESSAGE(err.find("--member 7") != std::string::npos, err);
  CHECK_MESSAGE(err.find("holds members 0..2") != std::string::npos, err);
  CHECK_FALSE(fs::exists(out));

  o = export_opts(run, out);
  o.member = 1;
  o.ensemble = true;
  CHECK(tn::run_export(o) == tn::kExitUsage);
  CHECK_FALSE(fs::exists(out));

  o = export_opts(run, scratch("export-errors.bin"));
  std::tie(rc, err) = exit_and_stderr([&] { return tn::run_export(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_MESSAGE(err.find("--format onnx or --format npz") != std::string::npos, err);
  CHECK_FALSE(fs::exists(scratch("export-errors.bin")));

  o = export_opts(scratch("missing.h5"), out);
  CHECK(tn::run_export(o) == tn::kExitUsage);
  CHECK_FALSE(fs::exists(out));

  // An existing --out is kept without --force, replaced with it.
  write_file("export-errors.onnx", "keep me");
  o = export_opts(run, out);
  std::tie(rc, err) = exit_and_stderr([&] { return tn::run_export(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_MESSAGE(err.find("pass --force") != std::string::npos, err);
  CHECK(slurp(out) == "keep me");
  o.force = true;
  CHECK(tn::run_export(o) == tn::kExitOk);
  CHECK(slurp(out).size() > 1000);

  // The run file itself is never the output.
  o = export_opts(run, run);
  o.format = "onnx";
  o.force = true;
  CHECK(tn::run_export(o) == tn::kExitUsage);
}

TEST_CASE("export: the ensemble of a group_by run is refused, its members export") {
  const fs::path run =
      train_config("random-walk", {"swarm.size=3", "data.source.series=3", "train.epochs=1"}, "random-walk-3");
  const fs::path out = scratch("export-group.onnx");
  fs::remove(out);
  tn::ExportOptions o = export_opts(run, out);
  auto [rc, err] = exit_and_stderr([&] { return tn::run_export(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_MESSAGE(err.find("one member per group") != std::string::npos, err);
  CHECK_MESSAGE(err.find("--member K (0..2)") != std::string::npos, err);
  CHECK_FALSE(fs::exists(out));
  o.member = 2;
  CHECK(tn::run_export(o) == tn::kExitOk);
  CHECK(fs::exists(out));
}

TEST_CASE("export: .npy headers as numpy writes them") {
  const auto header = [](const tn::NpyArray& a) {
    const std::string b = tn::npy_bytes(a);
    REQUIRE(b.size() >= 10);
    CHECK(b.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t len = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
    CHECK((10 + len) % 64 == 0);
    CHECK(b[9 + len] == '\n');
    return b.substr(10, len);
  };
  CHECK(header({"w", {2, 3}, std::vector<float>(6, 1.0f)}).starts_with(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  CHECK(header({"m", {3}, std::vector<std::int32_t>{1, 2, 3}}).starts_with(
      "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"));
  CHECK(header({"c", {}, std::vector<std::string>{"héllo"}}).starts_with(
      "{'descr': '<U5', 'fortran_order': False, 'shape': (), }"));
  // UTF-32: 'é' is one code point, zero padding to the longest string.
  const std::string b = tn::npy_bytes({"n", {2}, std::vector<std::string>{"é", "ab"}});
  CHECK(b.substr(b.size() - 16) == std::string("\xE9\0\0\0\0\0\0\0a\0\0\0b\0\0\0", 16));
  CHECK_THROWS_AS(tn::npy_bytes({"bad", {4}, std::vector<float>(3)}), std::invalid_argument);
  CHECK_THROWS_AS(tn::npy_bytes({"bad", {1}, std::vector<std::string>{"\xC3"}}), std::invalid_argument);
  const std::string z = tn::npz_bytes({{"params/layer_0/W", {2}, std::vector<float>{1, 2}}});
  CHECK(z.substr(0, 4) == std::string("PK\x03\x04", 4));
  CHECK(z.find("params/layer_0/W.npy") != std::string::npos);
}
