// data.normalize_target: regression targets scaled by the training split's statistics for
// training (standard by default for regression), and what a user sees (the run's /predictions,
// eval's metrics, predict's output, the ONNX graph) back in the target's original units.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "cli_test_util.h"
#include "config/config.h"
#include "data/prepare.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "npy_test_util.h"
#include "python_test_util.h"
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

// Two features, two targets of very different scales (about 50..150 and 3000..7000), as .npy.
std::string two_targets_source() {
  std::vector<float> X, Y;
  for (int i = 0; i < 120; ++i) {
    const float a = static_cast<float>(i % 12) / 6.0f - 1, b = static_cast<float>(i / 12) / 5.0f - 1;
    X.insert(X.end(), {a, b});
    Y.insert(Y.end(), {100 + 50 * std::sin(2 * a) + 10 * b, 5000 + 2000 * b * b - 800 * a});
  }
  const auto put = [](const std::string& name, const std::vector<float>& v) {
    const tn::test::NpyBytes b = tn::test::npy("<f4", "(120, 2)", tn::test::raw(v));
    return write_file(name, std::string(b.begin(), b.end())).string();
  };
  const std::string x = put("two-x.npy", X), y = put("two-y.npy", Y);
  return "{type: npy, x_path: " + x + ", y_path: " + y + "}";
}

std::string two_targets_yaml(const std::string& scaling) {
  return "seed: 2\nswarm: {size: 3}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n"
         "    - {type: dense, units: 2}\nloss: mse\noptimizer: {type: adam, lr: 0.02}\ndata:\n  source: " +
         two_targets_source() + "\n  split: {train: 0.6, val: 0.2, test: 0.2}\n  normalize: standard\n"
         "  normalize_target: " + scaling + "\ntrain: {epochs: 30, batch_size: 16}\n";
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

TEST_CASE("normalize_target: a regression run without the key trains on standardized targets and says so once") {
  std::string yaml = wide_yaml(wide_targets_csv(), "standard");
  yaml.erase(yaml.find("  normalize_target: standard\n"), std::string("  normalize_target: standard\n").size());
  TrainOptions o;
  o.config_path = write_file("target-default.yaml", yaml).string();
  o.out = scratch("target-default.h5").string();
  o.force = true;
  const auto [rc, err] = exit_and_stderr([&] { return run_train(o); });
  REQUIRE(rc == kExitOk);
  const std::string said = "targets standardized with the training split's mean and std (";
  CHECK_MESSAGE(err.find(said) != std::string::npos, err);
  CHECK_MESSAGE(err.find(said) == err.rfind(said), err);
  CHECK_MESSAGE(err.find("data.normalize_target: standard (set none to train on raw targets)") != std::string::npos, err);
  const RunFile r = read_run_file(*o.out);
  CHECK(r.config_yaml.find("normalize_target: standard") != std::string::npos);
  CHECK(r.normalization.target_mean.data.size() == 1);
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
  // Each member's own statistics (its bootstrap draws): member 1's row is the lone member's.
  REQUIRE(a.normalization.member_target_mean.data.size() == 3);
  REQUIRE(b.normalization.member_target_mean.data.size() == 1);
  CHECK(a.normalization.member_target_mean.data[1] == b.normalization.member_target_mean.data[0]);
  CHECK(a.normalization.member_target_std.data[1] == b.normalization.member_target_std.data[0]);
  const Predictions* pa = a.find_predictions("test");
  const Predictions* pb = b.find_predictions("test");
  REQUIRE(pa != nullptr);
  REQUIRE(pb != nullptr);
  const std::size_t N = pb->members.data.size();
  REQUIRE(pa->members.data.size() == 3 * N);
  CHECK(std::memcmp(pa->members.data.data() + N, pb->members.data.data(), N * sizeof(float)) == 0);
}

TEST_CASE("normalize_target: every method's statistics and eval's metrics agree with scikit-learn on the stored predictions") {
  const std::string py = tn::test::python_with_sklearn();
  if (py.empty()) {
    MESSAGE("SKIPPED: no python3 with h5py and scikit-learn (apt-get install python3-sklearn python3-h5py)");
    return;
  }
  const fs::path csv = wide_targets_csv();
  std::vector<std::pair<fs::path, std::string>> runs;
  for (const std::string m : {"standard", "minmax", "robust", "log1p"})
    runs.emplace_back(train_run("target-sk-" + m, wide_yaml(csv, m)), m);
  for (const std::string m : {"robust", "log1p"})
    runs.emplace_back(train_run("target-sk-two-" + m, two_targets_yaml(m)), m);
  // The statistics from the stored training targets (in original units) as scikit-learn and
  // numpy fit them; the ensemble's metrics on the stored test predictions.
  const fs::path script = write_file("target-sk.py", R"(import sys, h5py, numpy as np
from sklearn.preprocessing import RobustScaler, StandardScaler, MinMaxScaler
from sklearn.metrics import mean_squared_error, mean_absolute_error, r2_score
for path, method in zip(sys.argv[1::2], sys.argv[2::2]):
    f = h5py.File(path, 'r')
    y = f['data/splits/train/y'][()].astype(np.float64)
    y = y.reshape(len(y), -1)
    if method == 'standard': s = StandardScaler().fit(y); a, b = s.mean_, s.scale_
    elif method == 'minmax': a, b = y.min(0), np.ptp(y, 0)
    elif method == 'robust': s = RobustScaler().fit(y); a, b = s.center_, s.scale_
    else: s = StandardScaler().fit(np.log1p(y)); a, b = s.mean_, s.scale_
    n = f['data/normalization']
    err = max(np.max(np.abs(n['target_mean'][()] - a) / np.maximum(1, np.abs(a))),
              np.max(np.abs(n['target_std'][()] - b) / np.maximum(1, np.abs(b))))
    p = f['predictions/test']
    e = p['ensemble_mean'][()].astype(np.float64)
    t = p['targets'][()].astype(np.float64).reshape(e.shape)
    print(method, '%.3g' % err, '%.17g %.17g %.17g' % (mean_squared_error(t, e), mean_absolute_error(t, e), r2_score(t, e)))
)");
  std::istringstream out(tn::test::run_script_on_runs(py, script.string(), runs));
  for (const auto& [run, m] : runs) {
    std::string method;
    double stat_err = 1, mse = 0, mae = 0, r2 = 0;
    REQUIRE_MESSAGE(static_cast<bool>(out >> method >> stat_err >> mse >> mae >> r2), out.str());
    INFO(run.string());
    CHECK(method == m);
    CHECK(stat_err < 1e-5);
    const nlohmann::json j = eval_json(eval_opts(run));
    CHECK(j["ensemble"]["mse"].get<double>() == doctest::Approx(mse).epsilon(1e-5));
    CHECK(j["ensemble"]["mae"].get<double>() == doctest::Approx(mae).epsilon(1e-5));
    CHECK(j["ensemble"]["r2"].get<double>() == doctest::Approx(r2).epsilon(1e-5));
    CHECK(r2 > 0.3);  // every method fits these targets in 30-40 epochs
  }
}

TEST_CASE("normalize_target: several target columns get their own statistics, in original units everywhere") {
  const fs::path run = train_run("target-two", two_targets_yaml("standard"));
  const RunFile r = read_run_file(run.string());
  REQUIRE(r.normalization.target_mean.data.size() == 2);
  CHECK(r.normalization.target_mean.data[0] == doctest::Approx(100).epsilon(0.2));
  CHECK(r.normalization.target_mean.data[1] == doctest::Approx(5700).epsilon(0.2));
  const Predictions* p = r.find_predictions("test");
  REQUIRE(p != nullptr);
  double mean1 = 0;
  const std::size_t N = p->targets.data.size() / 2;
  for (std::size_t i = 0; i < N; ++i) mean1 += p->ensemble_mean.data[2 * i + 1] / static_cast<double>(N);
  CHECK(mean1 > 3000);  // the second column's predictions in its own units
  CHECK(eval_json(eval_opts(run))["ensemble"]["r2"].get<double>() > 0.5);
}

TEST_CASE("normalize_target: the ONNX graph outputs original units (log1p, several targets)") {
  const std::string python = tn::test::export_python();
  if (python.empty()) {
    MESSAGE("SKIPPED: no .venv-test with onnxruntime and onnx; run scripts/install-test-venv.sh");
    return;
  }
  const std::vector<fs::path> runs = {train_run("target-onnx-log1p", wide_yaml(wide_targets_csv(), "log1p")),
                                      train_run("target-onnx-two", two_targets_yaml("robust"))};
  std::string cmd = python + " " + TURBANET_SOURCE_DIR + "/scripts/check_export.py " + TURBANET_BINARY;
  for (const fs::path& r : runs) cmd += " '" + r.string() + "'";
  const std::string out = tn::test::run_command(cmd + " 2>&1");
  CHECK_MESSAGE(out.find("\n0 failures") != std::string::npos, out);
  CHECK(out.find("FAIL") == std::string::npos);
}

TEST_CASE("normalize_target: log1p of a target at most -1 exits 2 naming the file line and column") {
  std::string csv = "x,t\n";
  for (int i = 0; i < 20; ++i) csv += fmt::format("{},{}\n", i, i == 13 ? -1.5 : 3.0 + i);
  const fs::path data = write_file("log1p-bad.csv", csv);
  TrainOptions o;
  o.config_path = write_file("log1p-bad.yaml", wide_yaml(data, "log1p")).string();
  o.out = scratch("log1p-bad.h5").string();
  o.force = true;
  fs::remove(*o.out);
  const auto [rc, err] = exit_and_stderr([&] { return run_train(o); });
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find(data.string() + ":15: column 't': target -1.5 is at most -1, which log1p cannot take") !=
                    std::string::npos,
                err);
  CHECK_MESSAGE(err.find("use standard or robust") != std::string::npos, err);
  CHECK_FALSE(fs::exists(*o.out));
}

TEST_CASE("normalize_target: a run file from before the standard default evaluates as it did") {
  // A run trained on raw targets whose /config, as older binaries wrote it, does not name the key.
  const fs::path run = train_run("target-old", wide_yaml(wide_targets_csv(), "none"));
  const nlohmann::json before = eval_json(eval_opts(run));
  RunFile r = read_run_file(run.string());
  const std::string key = "  normalize_target: none\n";
  REQUIRE(r.config_yaml.find(key) != std::string::npos);
  r.config_yaml.erase(r.config_yaml.find(key), key.size());
  const fs::path old = scratch("target-old-config.h5");
  write_run_file(old.string(), r);
  CHECK(load_swarm_model(old.string()).cfg.data.normalize_target == Normalize::None);
  const nlohmann::json after = eval_json(eval_opts(old));
  CHECK(after["ensemble"] == before["ensemble"]);
  CHECK(after["members"] == before["members"]);
}
