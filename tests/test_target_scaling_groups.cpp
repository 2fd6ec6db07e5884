// data.normalize_target with group_by and normalize_per_member: target statistics per member
// group [G, T], each from its own group's training rows, and every member's outputs turned back
// with its own statistics (the run's /predictions, eval's per-member metrics, predict, export).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "python_test_util.h"

using namespace tn;
using namespace evaltest;

namespace {

// Three groups of one feature whose targets lie on very different scales: about 10, 1000 and
// -5 (a spread of 2, 300 and 0.05): shared statistics would leave two of them nearly constant.
fs::path group_targets_csv() {
  std::string csv = "ticker,x,y\n";
  const char* names[3] = {"BBB", "AAA", "CCC"};
  const double offset[3] = {10, 1000, -5}, scale[3] = {2, 300, 0.05};
  for (int i = 0; i < 150; ++i) {
    const int g = (i * 7) % 3;
    const double x = (i % 50) / 25.0 - 1;
    csv += fmt::format("{},{:.6g},{:.9g}\n", names[g], x, offset[g] + scale[g] * std::sin(2.5 * x));
  }
  return write_file("group-targets.csv", csv);
}

std::string group_yaml(const fs::path& csv, const std::string& scaling, bool per_member = true) {
  return "seed: 4\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n"
         "    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: 0.02}\ndata:\n  source: {type: csv, path: " +
         csv.string() + ", features: [x], target: y}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
         "  per_member: {group_by: ticker}\n  normalize: standard\n  normalize_per_member: " +
         (per_member ? "true" : "false") + "\n  normalize_target: " + scaling + "\ntrain: {epochs: 40, batch_size: 16}\n";
}

// Mean squared error of each member on its own samples, from the stored predictions.
std::vector<double> group_mse(const Predictions& p, int S) {
  std::vector<double> sq(static_cast<std::size_t>(S)), n(static_cast<std::size_t>(S));
  for (std::size_t i = 0; i < p.member.size(); ++i) {
    const auto k = static_cast<std::size_t>(p.member[i]);
    sq[k] += std::pow(static_cast<double>(p.per_group.data[i]) - p.targets.data[i], 2);
    n[k] += 1;
  }
  for (std::size_t k = 0; k < sq.size(); ++k) sq[k] /= n[k];
  return sq;
}

}  // namespace

TEST_CASE("normalize_target per member group: each member's statistics are numpy's of its own training rows") {
  const std::string py = tn::test::python_with_sklearn();
  if (py.empty()) {
    MESSAGE("SKIPPED: no python3 with h5py and numpy (apt-get install python3-sklearn python3-h5py)");
    return;
  }
  const fs::path csv = group_targets_csv();
  std::vector<std::pair<fs::path, std::string>> runs;
  for (const std::string m : {"standard", "robust", "minmax"})
    runs.emplace_back(train_run("group-target-" + m, group_yaml(csv, m)), m);
  // Each member's rows of the training split (/members/set_rows), their targets in original
  // units (/data/splits/train/y), and numpy's statistics of them.
  const fs::path script = write_file("group-target.py", R"(import sys, h5py, numpy as np
for path, method in zip(sys.argv[1::2], sys.argv[2::2]):
    f = h5py.File(path, 'r')
    y = f['data/splits/train/y'][()].astype(np.float64)
    y = y.reshape(len(y), -1)
    off, rows = f['members/set_offset'][()], f['members/set_rows'][()]
    n = f['data/normalization']
    tm, ts = n['target_mean'][()], n['target_std'][()]
    err = 0.0
    for s in range(len(off) - 1):
        ys = y[rows[off[s]:off[s + 1]]]
        if method == 'standard': a, b = ys.mean(0), ys.std(0)
        elif method == 'minmax': a, b = ys.min(0), np.ptp(ys, 0)
        else: a, b = np.median(ys, 0), np.percentile(ys, 75, 0) - np.percentile(ys, 25, 0)
        err = max(err, np.max(np.abs(tm[s] - a) / np.maximum(1, np.abs(a))), np.max(np.abs(ts[s] - b) / np.maximum(1, np.abs(b))))
    print(method, 'x'.join(map(str, tm.shape)), '%.3g' % err)
)");
  std::istringstream out(tn::test::run_script_on_runs(py, script.string(), runs));
  for (const auto& [run, m] : runs) {
    std::string method, shape;
    double err = 1;
    REQUIRE_MESSAGE(static_cast<bool>(out >> method >> shape >> err), out.str());
    INFO(run.string());
    CHECK(method == m);
    CHECK(shape == "3x1");  // [G, T]
    CHECK(err < 1e-5);
  }
}

TEST_CASE("normalize_target per member group: predictions and eval's per-member metrics are in original units") {
  const fs::path csv = group_targets_csv();
  const fs::path run = train_run("group-target-eval", group_yaml(csv, "standard"));
  const RunFile r = read_run_file(run.string());
  REQUIRE(r.normalization.target_mean.shape == std::vector<std::uint64_t>{3, 1});
  // Groups in sorted order: AAA (about 1000), BBB (about 10), CCC (about -5).
  CHECK(r.normalization.target_mean.data[0] == doctest::Approx(1000).epsilon(0.1));
  CHECK(r.normalization.target_mean.data[1] == doctest::Approx(10).epsilon(0.1));
  CHECK(r.normalization.target_std.data[2] < 0.1f);
  const Predictions* p = r.find_predictions("test");
  REQUIRE(p != nullptr);
  REQUIRE(p->per_group.data.size() == p->member.size());
  for (std::size_t i = 0; i < p->member.size(); ++i) {  // each member's outputs in its group's units
    const auto k = static_cast<std::size_t>(p->member[i]);
    CHECK(std::abs(p->per_group.data[i] - r.normalization.target_mean.data[k]) < 3 * r.normalization.target_std.data[k]);
  }
  const std::vector<double> mse = group_mse(*p, 3);
  const nlohmann::json j = eval_json(eval_opts(run));
  REQUIRE(j["members"].size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(j["members"][k]["mse"].get<double>() == doctest::Approx(mse[k]).epsilon(1e-5));
  }
  // Shared statistics fit the small groups to the large one's scale: the small-scale member is
  // far worse in its own units (what per-group statistics are for).
  const RunFile shared = read_run_file(train_run("group-target-shared", group_yaml(csv, "standard", false)).string());
  CHECK(shared.normalization.target_mean.data.size() == 1);
  CHECK(group_mse(*shared.find_predictions("test"), 3)[2] > 10 * mse[2]);
}

TEST_CASE("normalize_target per member group: member k of the swarm is member k trained alone (shard k of 3), bitwise") {
  const fs::path csv = group_targets_csv();
  const std::string yaml = group_yaml(csv, "robust");
  const RunFile whole = read_run_file(train_run("group-target-whole", yaml).string());
  const Predictions* pw = whole.find_predictions("test");
  REQUIRE(pw != nullptr);
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    TrainOptions o;
    o.config_path = write_file("group-target-shard.yaml", yaml).string();
    o.out = scratch("group-target-shard.h5").string();
    o.shard = std::to_string(k) + "/3";
    o.force = true;
    o.verbosity = Verbosity::Quiet;
    REQUIRE(run_train(o) == kExitOk);
    const RunFile part = read_run_file(scratch("group-target-shard.shard-" + std::to_string(k) + "-of-3.h5").string());
    CHECK(part.normalization.target_mean.data == whole.normalization.target_mean.data);
    CHECK(part.normalization.target_std.data == whole.normalization.target_std.data);
    const Predictions* pp = part.find_predictions("test");
    REQUIRE(pp != nullptr);
    REQUIRE(pp->sample.size() == pp->member.size());
    for (std::size_t i = 0; i < pp->sample.size(); ++i) {
      const auto at = static_cast<std::size_t>(pp->sample[i]);
      CHECK(pp->member[i] == k);
      CHECK(std::memcmp(&pp->per_group.data[i], &pw->per_group.data[at], sizeof(float)) == 0);
    }
  }
}

TEST_CASE("normalize_target per member group: predict and each member's ONNX graph give its own original units") {
  const std::string python = tn::test::export_python();
  if (python.empty()) {
    MESSAGE("SKIPPED: no .venv-test with onnxruntime and onnx; run scripts/install-test-venv.sh");
    return;
  }
  const fs::path csv = group_targets_csv();
  const fs::path run = train_run("group-target-onnx", group_yaml(csv, "standard"));
  // The test rows of the CSV as raw inputs; member k's graph on its group's rows and predict's
  // member k on them against /predictions/test/own (original units), and the npz's statistics row.
  const fs::path script = write_file("group-target-onnx.py", R"(import sys, subprocess, tempfile, os, h5py, numpy as np
import onnxruntime as ort
turbanet, path, csv = sys.argv[1:4]
lines = open(csv).read().split('\n')[1:]
f = h5py.File(path, 'r')
rows = f['data/splits/test/rows'][()]
p = f['predictions/test']
own, member = p['own'][()], p['member'][()]
names = [n.decode() for n in f['members/group_names'][()]]
tm = f['data/normalization/target_mean'][()]
worst, checked = 0.0, 0
d = tempfile.mkdtemp()
inp = os.path.join(d, 'in.csv')
open(inp, 'w').write('ticker,x\n' + ''.join(','.join(lines[r].split(',')[:2]) + '\n' for r in rows))
subprocess.run([turbanet, 'predict', path, '--input', inp, '--out', os.path.join(d, 'pred.h5'), '--force', '-q'], check=True)
pm = h5py.File(os.path.join(d, 'pred.h5'), 'r')['members'][()]
for k in range(len(names)):
    sel = np.nonzero(member == k)[0]
    x = np.array([[float(lines[rows[i]].split(',')[1])] for i in sel], dtype=np.float32)
    out = os.path.join(d, f'm{k}.onnx')
    subprocess.run([turbanet, 'export', path, '--member', str(k), '--out', out, '-q'], check=True)
    s = ort.InferenceSession(out)
    y = s.run(['output'], {'input': x})[0]
    scale = max(1.0, float(np.max(np.abs(own[sel]))))
    worst = max(worst, float(np.max(np.abs(y - own[sel]))) / scale, float(np.max(np.abs(pm[k][sel] - own[sel]))) / scale)
    npz = os.path.join(d, f'm{k}.npz')
    subprocess.run([turbanet, 'export', path, '--member', str(k), '--format', 'npz', '--out', npz, '-q'], check=True)
    z = np.load(npz)
    worst = max(worst, float(np.max(np.abs(z['data/normalization/target_mean'] - tm[k]))))
    checked += len(sel)
print(checked, '%.3g' % worst)
)");
  const std::string cmd = python + " " + script.string() + " " + TURBANET_BINARY + " " + run.string() + " " + csv.string();
  std::istringstream out(tn::test::run_command(cmd + " 2>&1"));
  int checked = 0;
  double worst = 1;
  REQUIRE_MESSAGE(static_cast<bool>(out >> checked >> worst), out.str());
  CHECK(checked == 30);  // every test row, each by its own member
  CHECK(worst < 1e-5);
}
