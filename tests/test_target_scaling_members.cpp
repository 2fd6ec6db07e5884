// data.normalize_target with per_member bootstrap, subsample or shards: each member's target
// statistics from its own training rows ([S, T], /data/normalization/member_target_*), used as it
// gathers its batches (every backend and kernel) and to turn its outputs back into original units
// (training's predictions, eval, predict, export) before any ensemble is formed.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "cli_test_util.h"
#include "config/config.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "io/run_file_error.h"
#include "python_test_util.h"
#include "run/stored_swarm.h"
#include "target_test_util.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;
using namespace evaltest;

namespace {

// One feature, targets from about 60 to 340 with a heavy upper tail in a few rows, so that
// members' resamples differ visibly in their statistics.
fs::path member_targets_csv() {
  std::string csv = "x,t\n";
  for (int i = 0; i < 120; ++i) {
    const double x = i / 60.0 - 1;
    csv += fmt::format("{:.6g},{:.6g}\n", x, 200 + 120 * std::sin(2.5 * x) + (i % 17 == 0 ? 400 : 0));
  }
  return write_file("member-targets.csv", csv);
}

std::string member_yaml(const fs::path& csv, const std::string& per_member, const std::string& scaling,
                        const std::string& swarm = "{size: 4}") {
  return "seed: 5\nswarm: " + swarm + "\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n"
         "    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: 0.02}\ndata:\n  source: {type: csv, path: " +
         csv.string() + ", target: t}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n  per_member: " + per_member +
         "\n  normalize: standard\n  normalize_target: " + scaling + "\ntrain: {epochs: 25, batch_size: 16}\n";
}

bool same_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

TEST_CASE("per-member target statistics: each bootstrap, subsample or shard member's are numpy's of its own rows") {
  const std::string py = tn::test::python_with_h5py();
  if (py.empty()) {
    MESSAGE("SKIPPED: no python3 with numpy and h5py (apt-get install python3-h5py)");
    return;
  }
  const fs::path csv = member_targets_csv();
  // Lines "method mean std y...": each member's statistics and its rows' targets in original
  // units (a bootstrap member's draws with their repeats), for numpy to fit again.
  std::string lines;
  for (const std::string per_member : {"bootstrap", "{bootstrap: {fraction: 0.6}}", "{subsample: {fraction: 0.5}}", "shards"})
    for (const std::string method : {"standard", "minmax", "robust", "log1p"}) {
      CAPTURE(per_member);
      CAPTURE(method);
      const Config cfg = parse_config(member_yaml(csv, per_member, method), "m.yaml");
      REQUIRE(member_target_statistics(cfg.data));
      const PreparedData data = prepare_data(load_dataset(cfg.data, false), cfg.data);
      CHECK(data.target_mean.empty());  // no shared statistics: the training split holds f(y)
      Config raw_cfg = cfg;
      raw_cfg.data.normalize_target = Normalize::None;
      const PreparedData raw = prepare_data(load_dataset(raw_cfg.data, false), raw_cfg.data);
      REQUIRE(raw.train.rows == data.train.rows);
      const MemberSets sets = make_member_sets(cfg, data);
      REQUIRE(sets.target_mean.size() == 4);
      std::vector<int> all(4);
      std::iota(all.begin(), all.end(), 0);
      const MemberSets rows = select_member_sets(sets, all, 0, cfg.seed, static_cast<std::uint32_t>(data.train.n));
      for (int s = 0; s < 4; ++s) {
        lines += fmt::format("{} {:.9g} {:.9g}", method, sets.target_mean[s], sets.target_std[s]);
        for (std::uint32_t i = rows.offset[s]; i < rows.offset[s + 1]; ++i) lines += fmt::format(" {:.9g}", raw.train.y[rows.rows[i]]);
        lines += "\n";
      }
      // each member its own (two may share minmax's: the same smallest and largest target drawn)
      std::set<std::pair<float, float>> distinct;
      for (int s = 0; s < 4; ++s) distinct.insert({sets.target_mean[s], sets.target_std[s]});
      CHECK(distinct.size() > 1);
    }
  const fs::path data = write_file("member-stats.txt", lines);
  const fs::path script = write_file("member-stats.py", R"(import sys, numpy as np
worst = 0
for line in open(sys.argv[1]):
    method, mean, std, *y = line.split()
    y = np.array(y, dtype=np.float32).astype(np.float64)
    if method == 'log1p': y = np.log1p(np.float32(y)).astype(np.float64)
    if method in ('standard', 'log1p'): a, b = y.mean(), y.std()
    elif method == 'minmax': a, b = y.min(), np.ptp(y)
    else: a, b = np.percentile(y, 50), np.percentile(y, 75) - np.percentile(y, 25)
    worst = max(worst, abs(float(mean) - a) / max(1, abs(a)), abs(float(std) - b) / max(1, abs(b)))
print('%.3g' % worst)
)");
  const std::string out = tn::test::run_command(py + " " + script.string() + " " + data.string() + " 2>&1");
  double worst = 1;
  std::istringstream(out) >> worst;
  CHECK_MESSAGE(worst < 1e-6, out);
}

TEST_CASE("per-member target statistics: member k alone equals member k of a bootstrap swarm, bitwise, on every SIMD target") {
  const fs::path csv = member_targets_csv();
  const Config whole = parse_config(member_yaml(csv, "bootstrap", "standard"), "w.yaml");
  const Config alone = parse_config(member_yaml(csv, "bootstrap", "standard", "{size: 1, first_member: 2}"), "a.yaml");
  const PreparedData data = prepare_data(load_dataset(whole.data, false), whole.data);
  const MemberSets sw = make_member_sets(whole, data), one = make_member_sets(alone, data);
  REQUIRE(one.target_mean.size() == 1);
  CHECK(same_bits(&sw.target_mean[2], one.target_mean.data(), 1));
  CHECK(same_bits(&sw.target_std[2], one.target_std.data(), 1));
  for (CpuTarget target : targets_here()) {
    CAPTURE(std::string(to_string(target)));
    CpuBackend be2(2, target), be1(1, target);
    const TrainOutput a = train_swarm(whole, data, sw, be2, nullptr);
    const TrainOutput b = train_swarm(alone, data, one, be1, nullptr);
    const auto pa = test::member_params(a, a.params, 2), pb = test::member_params(b, b.params, 0);
    REQUIRE(pa.size() == pb.size());
    CHECK(same_bits(pa.data(), pb.data(), pa.size()));
    const int E = a.epochs;
    CHECK(same_bits(&a.train_loss[2 * E], &b.train_loss[0], E));
    CHECK(same_bits(&a.val_loss[2 * E], &b.val_loss[0], E));
    const std::size_t per = static_cast<std::size_t>(a.pred_n);
    CHECK(same_bits(&a.pred_members[2 * per], &b.pred_members[0], per));
  }
}

TEST_CASE("per-member target statistics: stored per member, and predictions in original units match numpy's from them") {
  const std::string py = tn::test::python_with_h5py();
  if (py.empty()) {
    MESSAGE("SKIPPED: no python3 with numpy and h5py (apt-get install python3-h5py)");
    return;
  }
  const fs::path csv = member_targets_csv();
  std::vector<std::pair<fs::path, std::string>> runs;
  for (const std::string m : {"standard", "log1p"})
    runs.emplace_back(train_run("member-target-" + m, member_yaml(csv, "bootstrap", m)), m);
  runs.emplace_back(train_run("member-target-shards", member_yaml(csv, "shards", "robust")), "robust");
  for (const auto& [run, m] : runs) {
    const RunFile r = read_run_file(run.string());
    CHECK(r.normalization.target_mean.data.empty());
    CHECK(r.normalization.member_target_mean.shape == std::vector<std::uint64_t>{4, 1});
    CHECK(r.normalization.member_target_std.shape == std::vector<std::uint64_t>{4, 1});
  }
  // Every member's forward pass on the stored (normalized) test inputs, turned back with its
  // own row of the stored statistics, against the run's /predictions/test; the ensemble is the
  // mean of the members in original units; eval scores the same.
  const fs::path script = write_file("member-target-check.py", R"(import sys, h5py, numpy as np
for path, method in zip(sys.argv[1::2], sys.argv[2::2]):
    f = h5py.File(path, 'r')
    x = f['data/splits/test/X'][()].astype(np.float64)
    W0, b0 = f['params/layer_0/W'][()].astype(np.float64), f['params/layer_0/b'][()].astype(np.float64)
    W1, b1 = f['params/layer_1/W'][()].astype(np.float64), f['params/layer_1/b'][()].astype(np.float64)
    n = f['data/normalization']
    mean, std = n['member_target_mean'][()].astype(np.float64), n['member_target_std'][()].astype(np.float64)
    h = np.tanh(np.einsum('nf,sfh->snh', x, W0) + b0[:, None, :])
    z = np.einsum('snh,sho->sno', h, W1) + b1[:, None, :]
    y = z * std[:, None, :] + mean[:, None, :]
    if method == 'log1p': y = np.expm1(y)
    p = f['predictions/test']
    got = p['members'][()].astype(np.float64).reshape(y.shape)
    scale = np.max(np.abs(y))
    t = p['targets'][()].astype(np.float64).reshape(-1)
    e = y.mean(0).reshape(-1)
    print(method, '%.3g' % (np.max(np.abs(got - y)) / scale), '%.3g' % (np.max(np.abs(p['ensemble_mean'][()].reshape(-1) - e)) / scale),
          '%.17g' % np.mean((t - e) ** 2))
)");
  std::istringstream out(tn::test::run_script_on_runs(py, script.string(), runs));
  for (const auto& [run, m] : runs) {
    INFO(run.string());
    std::string method;
    double members_err = 1, ensemble_err = 1, mse = 0;
    REQUIRE_MESSAGE(static_cast<bool>(out >> method >> members_err >> ensemble_err >> mse), out.str());
    CHECK(method == m);
    CHECK(members_err < 1e-5);
    CHECK(ensemble_err < 1e-5);
    CHECK(eval_json(eval_opts(run))["ensemble"]["mse"].get<double>() == doctest::Approx(mse).epsilon(1e-4));
  }
}

TEST_CASE("per-member target statistics: ONNX and npz exports give predict's original units, member by member") {
  const std::string python = tn::test::export_python();
  if (python.empty()) {
    MESSAGE("SKIPPED: no .venv-test with onnxruntime and onnx; run scripts/install-test-venv.sh");
    return;
  }
  const fs::path csv = member_targets_csv();
  const std::vector<fs::path> runs = {train_run("member-target-onnx-bootstrap", member_yaml(csv, "bootstrap", "standard")),
                                      train_run("member-target-onnx-subsample",
                                                member_yaml(csv, "{subsample: {fraction: 0.5}}", "log1p"))};
  std::string cmd = python + " " + TURBANET_SOURCE_DIR + "/scripts/check_export.py " + TURBANET_BINARY;
  for (const fs::path& r : runs) {
    REQUIRE(read_run_file(r.string()).normalization.member_target_mean.data.size() == 4);  // each member its own row
    cmd += " '" + r.string() + "'";
  }
  const std::string out = tn::test::run_command(cmd + " 2>&1");
  CHECK_MESSAGE(out.find("\n0 failures") != std::string::npos, out);
  CHECK(out.find("FAIL") == std::string::npos);
}

TEST_CASE("per-member target statistics: a run file whose rows do not match its members is refused, naming the dataset") {
  const fs::path run = train_run("member-target-rows", member_yaml(member_targets_csv(), "bootstrap", "standard"));
  RunFile r = read_run_file(run.string());
  REQUIRE(r.normalization.member_target_mean.data.size() == 4);
  for (Array* a : {&r.normalization.member_target_mean, &r.normalization.member_target_std}) {
    a->data.pop_back();
    a->shape = {3, 1};
  }
  const fs::path bad = scratch("member-target-rows-3.h5");
  write_run_file(bad.string(), r, true);
  CHECK_THROWS_WITH_AS(load_swarm_model(bad.string()), doctest::Contains("/data/normalization/member_target_mean has 3 entries"),
                       RunFileError);
}
