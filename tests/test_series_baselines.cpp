// Forecasts against naive baselines, end to end: the shipped stocks config is no worse than
// persistence on the median series (the check of issue #30: 16 series, 16 members, 20 epochs),
// while the same LSTMs on the prices themselves lose to it; eval's per-series table and JSON
// say which series beat which baseline; a transformed, window-scaled run forecasts exactly its
// stored test predictions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "backend/device_choice.h"
#include "cli_test_util.h"
#include "eval_test_util.h"
#include "io/prediction_file.h"
#include "io/run_file.h"

using namespace tn;
using namespace evaltest;

namespace {

fs::path stocks_run(const std::string& name, std::vector<std::string> set) {
  const fs::path out = scratch(name + ".h5");
  TrainOptions o;
  o.config_path = std::string(TURBANET_SOURCE_DIR) + "/configs/stocks-lstm.yaml";
  o.set = {"data.source.series=16", "swarm.size=16", "train.epochs=20"};
  o.set.insert(o.set.end(), set.begin(), set.end());
  o.out = out.string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(o) == kExitOk);
  return out;
}

nlohmann::json eval_json(const fs::path& run) {
  EvalOptions o = eval_opts(run);
  o.json = true;
  int rc = -1;
  const std::string text = capture(1, [&] { rc = run_eval(o); });
  REQUIRE(rc == kExitOk);
  return nlohmann::json::parse(text);
}

}  // namespace

TEST_CASE("stocks-lstm.yaml: no worse than persistence on the median series, where the model on prices loses") {
  const nlohmann::json shipped = eval_json(stocks_run("stocks-shipped", {}));
  const nlohmann::json& vs = shipped["vs_baselines"];
  MESSAGE(vs.dump());
  CHECK(shipped["compared_in"] == "original_units");
  CHECK(vs["persistence"]["mae"]["compared"] == 16);
  CHECK(vs["persistence"]["mae"]["median_ratio"].get<double>() <= 1.0);
  CHECK(vs["persistence"]["rmse"]["median_ratio"].get<double>() <= 1.0);
  CHECK(vs["persistence"]["mae"]["beat"].get<int>() >= 8);
  CHECK(vs["drift"]["mae"]["median_ratio"].get<double>() <= 1.0);
  CHECK(vs["seasonal_naive"]["mae"]["beat"] == 16);  // a random walk's level a season ago is far off

  // The same LSTMs on standardized prices (the defaults before): the trend is out of reach.
  const nlohmann::json levels = eval_json(stocks_run("stocks-levels", {"data.sequence.transform=none",
                                                                       "train.early_stopping=null"}));
  MESSAGE(levels["vs_baselines"].dump());
  CHECK(levels["vs_baselines"]["persistence"]["mae"]["median_ratio"].get<double>() > 1.2);
}

TEST_CASE("eval of a series run: per-series table and JSON say which series beat which baseline") {
  const fs::path run = stocks_run("stocks-table", {"data.source.series=4", "swarm.size=4", "data.source.length=200",
                                                   "train.epochs=2"});
  const nlohmann::json j = eval_json(run);
  REQUIRE(j["series"].size() == 4);
  std::vector<std::string> kinds;
  for (const auto& b : j["baselines"]) kinds.push_back(b["kind"]);
  CHECK(kinds == std::vector<std::string>{"persistence", "seasonal_naive", "drift"});
  const RunFile r = read_run_file(run.string());
  const EvalRecord& e = r.evals.front();
  const std::size_t M = e.metrics.size(), mae = static_cast<std::size_t>(
      std::find(e.metrics.begin(), e.metrics.end(), "mae") - e.metrics.begin());
  int beat = 0;
  for (int s = 0; s < 4; ++s) {
    const nlohmann::json& row = j["series"][s];
    CHECK(row["group"] == r.members.group_names[s]);
    CHECK(row["units"] == "original");
    const double model = e.original.members[s * M + mae], base = e.baselines[0].original.members[s * M + mae];
    CHECK(row["mae"].get<double>() == model);
    CHECK(row["baselines"]["persistence"]["mae"].get<double>() == base);
    CHECK(row["baselines"]["persistence"]["skill_mae"].get<double>() == doctest::Approx(1 - model / base));
    CHECK(row["baselines"]["persistence"]["beats_by_mae"] == (model < base));
    beat += model < base;
  }
  CHECK(j["vs_baselines"]["persistence"]["mae"]["beat"] == beat);
  CHECK(j["vs_baseline"] == j["vs_baselines"]["persistence"]);

  EvalOptions o = eval_opts(run);
  int rc = -1;
  const std::string table = capture(1, [&] { rc = run_eval(o); });
  REQUIRE(rc == kExitOk);
  MESSAGE(table);
  CHECK(table.find("per series: mae in original units; skill = 1 − model/baseline") != std::string::npos);
  CHECK(table.find("series  member       model     persistence    skill  seasonal_naive    skill           drift    skill") !=
        std::string::npos);
  CHECK(table.find(r.members.group_names[3] + "        #3") != std::string::npos);
  CHECK(table.find("series beat seasonal_naive by mae") != std::string::npos);
  CHECK(table.find("series beat drift by mae") != std::string::npos);
}

TEST_CASE("forecast: a log_diff, window-scaled run forecasts its stored test predictions, in prices") {
  const char* const yaml =
      "name: fc-logdiff\nseed: 4\nswarm: {size: 3}\nmodel:\n  layers:\n    - {type: gru, units: 5}\n"
      "    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: 0.01}\n"
      "data:\n  source: {type: random_walk, series: 3, length: 120, seed: 7}\n"
      "  split: {train: 0.7, val: 0.1, test: 0.2}\n  per_member: {group_by: ticker}\n"
      "  sequence: {window: 8, horizon: 2, stride: 3, target: close, time: date, transform: log_diff, scale: window}\n"
      "train: {epochs: 2, batch_size: 16}\n";
  DataGenerateOptions g;
  g.config_path = write_file("fc-logdiff.yaml", yaml).string();
  g.out = scratch("fc-logdiff.csv").string();
  g.force = true;
  g.verbosity = Verbosity::Quiet;
  REQUIRE(run_data_generate(g) == kExitOk);
  const std::string text = slurp(g.out);
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  const fs::path run = train_run("fc-logdiff", yaml);
  const RunFile r = read_run_file(run.string());
  CHECK(r.data.transform == "log_diff");
  CHECK(r.data.scale == "window");
  const Predictions* test = r.find_predictions("test");
  REQUIRE(test != nullptr);
  REQUIRE(test->per_group_original.data.size() == test->member.size());
  const DataSplit& split = *std::find_if(r.splits.begin(), r.splits.end(), [](const DataSplit& s) { return s.name == "test"; });
  std::map<int, int> last;  // each series' last test window
  for (std::size_t i = 0; i < test->member.size(); ++i) last[test->member[i]] = static_cast<int>(i);
  // Each series' rows up to its last test window's last input (target row − horizon 2).
  std::string csv = lines[0] + "\n";
  for (const auto& [member, i] : last)
    for (int row = member * 120; row <= split.rows[i] - 2; ++row) csv += lines[row + 1] + "\n";
  PredictOptions o;
  o.run_path = run.string();
  o.input = write_file("fc-logdiff-history.csv", csv).string();
  o.out = scratch("fc-logdiff-pred.h5").string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_predict(o) == kExitOk);
  const PredictionFile p = read_prediction_file(*o.out);
  REQUIRE(p.forecast.data.size() == 3);
  const bool on_cpu = list_gpus().empty();
  for (int s = 0; s < 3; ++s) {
    const int i = last.at(s);
    if (on_cpu) CHECK(std::memcmp(&p.forecast_normalized.data[s], &test->per_group.data[i], sizeof(float)) == 0);
    CHECK(p.forecast.data[s] == doctest::Approx(test->per_group_original.data[i]).epsilon(1e-6));
    // A price near the last close, not a log return.
    const double close = std::stod(tn::test::csv_cells(lines[split.rows[i] - 2 + 1])[2]);
    CHECK(p.forecast.data[s] == doctest::Approx(close).epsilon(0.2));
  }
}
