// data.normalize_target: regression targets scaled by the training split's statistics for
// training, and what a user sees (the run's /predictions, eval's metrics, predict's output) back
// in the target's original units.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "cli_test_util.h"
#include "config/config.h"
#include "data/prepare.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "run/stored_swarm.h"
#include "train/swarm_forward.h"

using namespace tn;
using namespace evaltest;

namespace {

// One feature, targets from about 60 to 340 (the diabetes range), so unscaled targets matter.
fs::path wide_targets_csv() {
  std::string csv = "x,t\n";
  for (int i = 0; i < 100; ++i) {
    const double x = i / 50.0 - 1;
    csv += fmt::format("{:.6g},{:.6g}\n", x, 200 + 120 * std::sin(2.5 * x) + 15 * std::cos(11.0 * x));
  }
  return write_file("wide-targets.csv", csv);
}

std::string wide_yaml(const fs::path& csv, const std::string& scaling) {
  return "seed: 1\nswarm: {size: 3}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n"
         "    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: 0.02}\ndata:\n  source: {type: csv, path: " +
         csv.string() + ", target: t}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n  normalize: standard\n"
         "  normalize_target: " + scaling + "\ntrain: {epochs: 40, batch_size: 16}\n";
}

}  // namespace

TEST_CASE("normalize_target: standard trains on scaled targets, and predictions and metrics are in original units") {
  const fs::path csv = wide_targets_csv();
  const fs::path run = train_run("target-standard", wide_yaml(csv, "standard"));
  const RunFile r = read_run_file(run.string());
  const Config cfg = parse_config(r.config_yaml, "run");
  CHECK(cfg.data.normalize_target == Normalize::Standard);
  const Dataset raw = load_dataset(cfg.data, false);
  const PreparedData d = prepare_data(raw, cfg.data);

  // The stored statistics are the training split's mean and (population) std of the raw targets.
  double mean = 0, var = 0;
  for (int row : d.train.rows) mean += raw.y[static_cast<std::size_t>(row)] / d.train.n;
  for (int row : d.train.rows) var += std::pow(raw.y[static_cast<std::size_t>(row)] - mean, 2) / d.train.n;
  REQUIRE(r.normalization.target_mean.data.size() == 1);
  REQUIRE(r.normalization.target_std.data.size() == 1);
  const float m = r.normalization.target_mean.data[0], sd = r.normalization.target_std.data[0];
  CHECK(m == doctest::Approx(mean).epsilon(1e-6));
  CHECK(sd == doctest::Approx(std::sqrt(var)).epsilon(1e-5));
  for (int i = 0; i < d.train.n; ++i)  // the model learns y' = (y − mean) / std
    CHECK(d.train.y[i] == (raw.y[static_cast<std::size_t>(d.train.rows[i])] - m) / sd);

  // /predictions/test: the affine of the model's own outputs, and the targets as in the file.
  const StoredSwarm s = load_swarm_model(run.string());
  BackendOptions cpu;
  cpu.device = DeviceKind::Cpu;
  const std::unique_ptr<Backend> be = make_backend(cpu, nullptr);
  const SwarmPredictions v = predict_swarm(*be, s.shape, s.cfg.loss.type, s.params, s.S, d.test.X, d.test.n, 16);
  const Predictions* p = r.find_predictions("test");
  REQUIRE(p != nullptr);
  REQUIRE(p->members.data.size() == v.outputs.size());
  for (std::size_t j = 0; j < v.outputs.size(); ++j)
    CHECK(p->members.data[j] == doctest::Approx(v.outputs[j] * sd + m).epsilon(1e-6));
  const int N = d.test.n;
  for (int i = 0; i < N; ++i)
    CHECK(p->targets.data[i] == doctest::Approx(raw.y[static_cast<std::size_t>(d.test.rows[i])]).epsilon(1e-6));

  // eval's metrics: of the ensemble mean against the targets in original units.
  double sq = 0, ybar = 0, tot = 0;
  for (int i = 0; i < N; ++i) ybar += p->targets.data[i] / N;
  for (int i = 0; i < N; ++i) {
    double e = 0;
    for (int k = 0; k < 3; ++k) e += p->members.data[k * N + i] / 3.0;
    sq += std::pow(e - p->targets.data[i], 2);
    tot += std::pow(p->targets.data[i] - ybar, 2);
  }
  const nlohmann::json j = eval_json(eval_opts(run));
  CHECK(j["ensemble"]["mse"].get<double>() == doctest::Approx(sq / N).epsilon(1e-5));
  CHECK(j["ensemble"]["r2"].get<double>() == doctest::Approx(1 - sq / tot).epsilon(1e-5));
  CHECK(j["ensemble"]["r2"].get<double>() > 0.5);  // 40 epochs fit the scaled target

  // predict on the raw test rows: the same values, in original units.
  std::string input = "x\n";
  for (int row : d.test.rows) input += fmt::format("{:.9g}\n", raw.X[static_cast<std::size_t>(row)]);
  PredictOptions po;
  po.run_path = run.string();
  po.input = write_file("wide-in.csv", input).string();
  po.verbosity = Verbosity::Quiet;
  int rc = -1;
  const std::string table = capture(1, [&] { rc = run_predict(po); });
  REQUIRE(rc == kExitOk);
  std::size_t at = table.find('\n') + 1;
  for (int i = 0; i < N; ++i) {
    const std::size_t end = table.find('\n', at);
    const std::vector<std::string> cells = tn::test::csv_cells(table.substr(at, end - at));
    REQUIRE(cells.size() == 6);
    for (int k = 0; k < 3; ++k)
      CHECK(std::stod(cells[3 + static_cast<std::size_t>(k)]) == doctest::Approx(p->members.data[k * N + i]).epsilon(1e-5));
    at = end + 1;
  }
}

TEST_CASE("normalize_target: none keeps the targets and stores no target statistics") {
  const fs::path run = train_run("target-none", wide_yaml(wide_targets_csv(), "none"));
  const RunFile r = read_run_file(run.string());
  CHECK(r.normalization.target_mean.data.empty());
  CHECK(r.normalization.target_std.data.empty());
}

TEST_CASE("normalize_target with bootstrap: member k alone equals member k of the swarm, bitwise") {
  const fs::path csv = wide_targets_csv();
  std::string yaml = wide_yaml(csv, "standard");
  yaml.replace(yaml.find("  normalize: standard\n"), 0, "  per_member: bootstrap\n");
  const fs::path whole = train_run("target-swarm", yaml);
  yaml.replace(yaml.find("swarm: {size: 3}"), 16, "swarm: {size: 1, first_member: 1}");
  const fs::path alone = train_run("target-alone", yaml);
  const RunFile a = read_run_file(whole.string()), b = read_run_file(alone.string());
  CHECK(a.normalization.target_mean.data == b.normalization.target_mean.data);
  CHECK(a.normalization.target_std.data == b.normalization.target_std.data);
  const Predictions* pa = a.find_predictions("test");
  const Predictions* pb = b.find_predictions("test");
  REQUIRE(pa != nullptr);
  REQUIRE(pb != nullptr);
  const std::size_t N = pb->members.data.size();
  REQUIRE(pa->members.data.size() == 3 * N);
  CHECK(std::memcmp(pa->members.data.data() + N, pb->members.data.data(), N * sizeof(float)) == 0);
}
