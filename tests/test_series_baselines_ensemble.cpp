// Sequence runs without group_by (one swarm, an ensemble, over the table's series) are
// compared with the naive forecasts as group_by runs are: the ensemble per series, the members'
// skill; the persistence figures checked against the data by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval_test_util.h"
#include "io/run_file.h"

using namespace tn;
using namespace evaltest;

namespace {

// One series, distinct values: y_t = 100 + 0.3 t + 5 sin(0.7 t), t = 0..149.
std::vector<double> series_values() {
  std::vector<double> y;
  for (int t = 0; t < 150; ++t) y.push_back(100 + 0.3 * t + 5 * std::sin(0.7 * t));
  return y;
}

std::string series_config(const std::string& csv) {
  return "name: ungrouped\nseed: 1\ndevice: cpu\nswarm: {size: 4}\nmodel:\n  layers:\n"
         "    - {type: gru, units: 8}\n    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: 0.01}\n"
         "data:\n  source: {type: csv, path: " + csv + "}\n  split: {train: 0.7, val: 0.1, test: 0.2}\n"
         "  sequence: {window: 6, horizon: 1, target: y, season: 7}\n"
         "train: {epochs: 2, batch_size: 16}\n";
}

}  // namespace

TEST_CASE("eval of a sequence run without group_by: the ensemble and its members against persistence, checked by hand") {
  const std::vector<double> y = series_values();
  std::string csv = "y\n";
  for (double v : y) csv += std::to_string(v) + "\n";
  const fs::path data = write_file("ungrouped.csv", csv);
  const fs::path run = train_run("ungrouped", series_config(data.string()));
  const nlohmann::json j = eval_json(eval_opts(run));
  REQUIRE(j.contains("vs_naive"));
  const nlohmann::json& v = j["vs_naive"];
  CHECK(v["compared_in"] == "model_units");  // no normalization, no transform: the model's units are the data's
  REQUIRE(v["series"].size() == 1);
  // Persistence by hand: each test target's previous value in the series (horizon 1), the
  // targets (stored by training as they are) found in the data by value.
  const RunFile r = read_run_file(run.string());
  const Predictions* p = r.find_predictions("test");
  REQUIRE(p != nullptr);
  const std::vector<float>& targets = p->targets.data;
  REQUIRE(!targets.empty());
  double sum = 0;
  for (float target : targets) {
    int at = -1;
    for (int t = 1; t < static_cast<int>(y.size()); ++t)
      if (std::abs(y[t] - target) < 1e-3) at = t;
    REQUIRE(at > 0);
    sum += std::abs(target - y[at - 1]);
  }
  const double persistence_mae = sum / static_cast<double>(targets.size());
  const nlohmann::json& pooled = v["pooled"]["persistence"];
  CHECK(pooled["mae"].get<double>() == doctest::Approx(persistence_mae).epsilon(1e-4));
  CHECK(v["series"][0]["baselines"]["persistence"]["mae"].get<double>() == doctest::Approx(persistence_mae).epsilon(1e-4));
  CHECK(v["series"][0]["n_samples"] == static_cast<int>(targets.size()));
  // The ensemble's figure is eval's ensemble mae, and its skill 1 − ensemble/persistence.
  const double ensemble_mae = j["ensemble"]["mae"].get<double>();
  CHECK(pooled["ensemble_mae"].get<double>() == doctest::Approx(ensemble_mae).epsilon(1e-4));
  CHECK(pooled["skill_mae"].get<double>() == doctest::Approx(1 - ensemble_mae / persistence_mae).epsilon(1e-4));
  CHECK(v["vs_baselines"]["persistence"]["mae"]["compared"] == 1);
  CHECK(v["vs_baselines"]["persistence"]["mae"]["beat"] == (ensemble_mae < persistence_mae ? 1 : 0));
  // Every member against each of the three forecasts by mae and rmse.
  REQUIRE(v["members"].size() == 6);
  CHECK(v["members"][0]["kind"] == "persistence");
  CHECK(v["members"][0]["metric"] == "mae");
  CHECK(v["members"][0]["baseline"].get<double>() == doctest::Approx(persistence_mae).epsilon(1e-4));
  CHECK(v["members"][0]["compared"] == 4);
  CHECK(v["members"][0]["skill_quantiles"].size() == 7);
  CHECK(v["members"][2]["kind"] == "seasonal_naive");
  CHECK(v["members"][4]["kind"] == "drift");
  // The text says the same in the grouped run's words.
  EvalOptions o = eval_opts(run);
  int rc = -1;
  const std::string text = capture(1, [&] { rc = run_eval(o); });
  CHECK(rc == kExitOk);
  CHECK(text.find("the ensemble against naive forecasts") != std::string::npos);
  CHECK(text.find("of 1 series beat persistence by mae (median ratio model/persistence") != std::string::npos);
  CHECK(text.find("persistence by mae (") != std::string::npos);
  CHECK(text.find("of 4 members beat it, skill median") != std::string::npos);
}

TEST_CASE("eval of a run without sequence data has no naive forecasts to compare with") {
  const fs::path run = train_run("not-a-series", spirals_yaml(2, 1));
  const nlohmann::json j = eval_json(eval_opts(run));
  CHECK(!j.contains("vs_naive"));
}
