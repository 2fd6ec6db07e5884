// One model per entity end to end: a CSV with a group column, group_by members with their
// own normalization, the member sets recorded in the run file, and eval/predict re-applying
// each group's statistics.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli/commands/commands.h"
#include "io/run_file.h"

using namespace tn;
namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() {
  const fs::path d = fs::temp_directory_path() / ("turbanet-group-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// Three series of different lengths and scales: y = 2·x/scale + 1, x in [0, scale·n).
fs::path write_series_csv(const fs::path& dir) {
  const fs::path p = dir / "series.csv";
  std::ofstream f(p);
  f << "ticker,x,y\n";
  const char* names[3] = {"BBB", "AAA", "CCC"};
  const int lengths[3] = {40, 25, 60};
  const double scales[3] = {1.0, 100.0, 0.01};
  for (int g = 0; g < 3; ++g)
    for (int i = 0; i < lengths[g]; ++i) {
      const double x = scales[g] * i / lengths[g];
      f << names[g] << "," << x << "," << 2.0 * x / scales[g] + 1.0 << "\n";
    }
  return p;
}

}  // namespace

TEST_CASE("group_by: one member per group, recorded and re-applied by eval and predict") {
  const fs::path dir = scratch_dir();
  const fs::path csv = write_series_csv(dir);
  const fs::path cfg = dir / "group.yaml";
  std::ofstream(cfg) << "name: groups\nseed: 3\nswarm: {size: 3}\nmodel:\n  layers:\n"
                        "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 1}\n"
                        "loss: mse\noptimizer: {type: adam, lr: 0.03}\n"
                        "data:\n  source: {type: csv, path: " << csv.string() << ", features: [x], target: y}\n"
                        "  split: {train: 0.8, test: 0.2, seed: 1}\n  per_member: {group_by: ticker}\n"
                        "  normalize: standard\n  normalize_per_member: true\n"
                        "train: {epochs: 150, batch_size: 8}\n";
  const fs::path out = dir / "groups.h5";
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = out.string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(o) == kExitOk);

  const RunFile r = read_run_file(out.string());
  CHECK(r.members.per_member == "group_by");
  CHECK(r.members.group_names == std::vector<std::string>{"AAA", "BBB", "CCC"});
  REQUIRE(r.members.sample_count.size() == 3);
  int total = 0;
  for (int s = 0; s < 3; ++s) {
    total += r.members.sample_count[s];
    CHECK(r.members.set_offset[s + 1] - r.members.set_offset[s] == r.members.sample_count[s]);
  }
  CHECK(total == 100);  // 80% of 125 rows
  CHECK(r.normalization.method == "standard");
  CHECK(r.normalization.mean.shape == std::vector<std::uint64_t>{3, 1});
  // Each group's mean reflects its own scale (AAA ~ 50, BBB ~ 0.5, CCC ~ 0.005).
  CHECK(r.normalization.mean.data[0] > 10.0f);
  CHECK(r.normalization.mean.data[2] < 0.1f);
  // Every member fits its own series (after per-group normalization the task is the same).
  for (int s = 0; s < 3; ++s) CHECK(r.train_loss.data[static_cast<std::size_t>(s) * 150 + 149] < 0.05f);

  EvalOptions e;
  e.run_path = out.string();
  e.verbosity = Verbosity::Quiet;
  CHECK(run_eval(e) == kExitOk);

  PredictOptions p;
  p.run_path = out.string();
  p.input = csv.string();
  p.out = (dir / "pred.csv").string();
  p.verbosity = Verbosity::Quiet;
  CHECK(run_predict(p) == kExitOk);
  CHECK(fs::file_size(dir / "pred.csv") > 100);

  // Data without the group column cannot be normalized per group.
  std::ofstream(dir / "nogroup.csv") << "x\n0.5\n";
  p.input = (dir / "nogroup.csv").string();
  CHECK(run_predict(p) == kExitUsage);
  fs::remove_all(dir);
}
