// Runs with one member per group (group_by): each member predicts and is scored on its own
// group's samples only; per-member metric quantiles, the persistence baseline and the
// original units; the eval CLI on a small stocks-lstm run and the histogram script.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "run/eval_record.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "data/sequence.h"
#include "eval/per_group.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "train/swarm_forward.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;
using tn::test::member_params;
using namespace evaltest;

namespace {

const char* const kSeriesYaml =
    "name: own\nseed: 3\nswarm: {size: 4}\nmodel:\n  layers:\n    - {type: lstm, units: 6}\n    - {type: dense, units: 1}\n"
    "loss: mse\noptimizer: {type: adam, lr: 0.01}\n"
    "data:\n  source: {type: random_walk, series: 4, length: 120, seed: 2}\n"
    "  split: {train: 0.7, val: 0.1, test: 0.2}\n  per_member: {group_by: ticker}\n"
    "  normalize: standard\n  normalize_per_member: true\n"
    "  sequence: {window: 5, horizon: 1, stride: 1, target: close, features: [close], time: date}\n"
    "train: {epochs: 2, batch_size: 8}\n";

// The rows of X [n, F] whose group is g.
std::vector<float> rows_of(const SplitData& s, int F, int g, std::vector<int>& which) {
  std::vector<float> X;
  for (int i = 0; i < s.n; ++i)
    if (s.group[i] == g) {
      which.push_back(i);
      X.insert(X.end(), s.X.begin() + static_cast<std::ptrdiff_t>(i) * F, s.X.begin() + static_cast<std::ptrdiff_t>(i + 1) * F);
    }
  return X;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("group_by: each member predicts exactly its own group's samples, as it would alone") {
  const Config cfg = parse_config(kSeriesYaml, "own.yaml");
  const PreparedData data = prepare_data(load_dataset(cfg.data, false), cfg.data);
  CpuBackend be(2);
  const TrainOutput t = train_swarm(cfg, data, be, nullptr);
  CHECK(t.pred_members.empty());
  REQUIRE(t.pred_member == data.test.group);
  REQUIRE(t.pred_group.size() == static_cast<std::size_t>(data.test.n));
  for (int g = 0; g < 4; ++g) {
    std::vector<int> which;
    const std::vector<float> X = rows_of(data.test, data.features, g, which);
    REQUIRE(!which.empty());
    const SwarmPredictions alone =
        predict_swarm(be, t.shape, cfg.loss.type, member_params(t, g), 1, X, static_cast<int>(which.size()), 8);
    for (std::size_t k = 0; k < which.size(); ++k) CHECK(t.pred_group[which[k]] == alone.outputs[k]);
  }
  // The same from the stored parameters, and from a swarm trained in chunks.
  const GroupPredictions p = predict_per_group(be, t.shape, cfg.loss.type, t.params, 4, data.test.X, data.test.n, 8,
                                             data.test.group);
  CHECK(same_bits(p.outputs, t.pred_group));
  const TrainOutput chunked = train_swarm_in_chunks(cfg, data, make_member_sets(cfg, data), be, nullptr, 3);
  CHECK(same_bits(chunked.pred_group, t.pred_group));
  CHECK(chunked.pred_member == t.pred_member);
}

TEST_CASE("group sample sets: unequal groups, samples without a member, and an empty member") {
  const MemberSets s = group_sample_sets({1, 0, 1, -1, 1, 5}, 3);
  CHECK(s.offset == std::vector<std::uint32_t>{0, 1, 4, 4});
  CHECK(s.rows == std::vector<std::uint32_t>{1, 0, 2, 4});
  std::vector<std::uint32_t> table(4);
  member_epoch_rows(s, 0, nullptr, 4, table.data());
  CHECK(table == std::vector<std::uint32_t>{1, 1, 1, 1});
  member_epoch_rows(s, 2, nullptr, 4, table.data());
  CHECK(table == std::vector<std::uint32_t>{0, 0, 0, 0});

  // A dense swarm over interleaved groups of different sizes: each sample through its member alone.
  const Config cfg = parse_config(
      "swarm: {size: 3}\nmodel: {layers: [{type: dense, units: 5, activation: tanh}, {units: 1}]}\nloss: bce\n"
      "data: {source: {type: spirals, n: 30}}\n", "dense.yaml");
  const ModelShape shape = make_model_shape(cfg, prepare_data(load_dataset(cfg.data, true), cfg.data));
  const ParamLayout layout(shape, 3);
  const std::vector<float> params = init_params(shape, layout, 11, 0, {1.0f, 1.0f, 1.0f});
  std::vector<float> X;
  for (int i = 0; i < 14; ++i) X.insert(X.end(), {0.1f * i, -0.05f * i * i});
  const std::vector<int> member = {2, 0, 0, 2, 1, 0, 0, 2, 0, 0, 0, 2, 0, 0};  // 9, 1 and 4 samples
  CpuBackend be(2);
  const GroupPredictions own = predict_per_group(be, shape, LossType::Bce, params, 3, X, 14, 4, member);
  const SwarmPredictions all = predict_swarm(be, shape, LossType::Bce, params, 3, X, 14, 4);
  REQUIRE(own.O == 1);
  for (int i = 0; i < 14; ++i)
    CHECK(own.outputs[i] == doctest::Approx(all.outputs[static_cast<std::size_t>(member[i]) * 14 + i]).epsilon(1e-6));
}

TEST_CASE("per-group evaluation: per-member metrics, pooled and quantiles by hand") {
  GroupPredictions p;
  p.S = 3;
  p.N = 6;
  p.O = 1;
  p.member = {0, 1, 0, 1, 1, 2};
  p.outputs = {1.0f, 2.0f, 3.0f, 0.0f, 1.0f, NAN};
  GroupTargets t;
  t.y = {0.0f, 2.0f, 5.0f, 1.0f, 4.0f, 1.0f};
  const GroupEvaluation e = evaluate_per_group(p, LossType::Mse, t);
  REQUIRE(e.names == std::vector<std::string>{"mse", "rmse", "mae", "r2"});
  CHECK(e.samples == std::vector<int>{2, 3, 1});
  CHECK(e.excluded == std::vector<int>{2});
  // Member 0: errors 1, −2 → MSE 2.5, MAE 1.5. Member 1: 0, −1, −3 → MSE 10/3, MAE 4/3.
  CHECK(e.model.members[0].values[0] == doctest::Approx(2.5));
  CHECK(e.model.members[0].values[1] == doctest::Approx(std::sqrt(2.5)));
  CHECK(e.model.members[0].values[2] == doctest::Approx(1.5));
  CHECK(e.model.members[1].values[0] == doctest::Approx(10.0 / 3));
  CHECK(e.model.members[1].values[2] == doctest::Approx(4.0 / 3));
  CHECK(std::isnan(e.model.members[2].values[2]));
  // Pooled over the 5 samples of the members left in: squared errors 1, 0, 4, 1, 9.
  CHECK(e.model.pooled.values[0] == doctest::Approx(15.0 / 5));
  CHECK(e.model.pooled.values[2] == doctest::Approx(7.0 / 5));
  // Quantiles of MAE over the two finite members {4/3, 3/2}: linear interpolation.
  const std::vector<double>& q = e.model.quantiles[2];
  CHECK(q[0] == doctest::Approx(4.0 / 3));
  CHECK(q[3] == doctest::Approx((4.0 / 3 + 1.5) / 2));
  CHECK(q[1] == doctest::Approx(4.0 / 3 + 0.05 * (1.5 - 4.0 / 3)));
  CHECK(q[6] == doctest::Approx(1.5));
  CHECK(e.baselines.empty());
  CHECK(e.original.empty());

  const std::vector<double> five = quantiles({5, 1, NAN, 3, 2, 4});
  CHECK(five == std::vector<double>{1, 1.2, 2, 3, 4, 4.8, 5});
}

TEST_CASE("naive baselines: scored on the members' own samples, in model and original units") {
  GroupPredictions p;
  p.S = 2;
  p.N = 4;
  p.O = 1;
  p.member = {0, 0, 1, 1};
  p.outputs = {0.5f, 0.5f, 2.0f, 1.0f};
  // Series 0 normalized by (10, 2), series 1 by (−3, 4): y = y'·std + mean.
  TargetUnits units;
  units.level = {11, 11, 1, 5};
  units.offset = {10, 10, -3, -3};
  units.scale = {2, 2, 4, 4};
  p.outputs_original = units.original(p.outputs);
  NaiveForecasts naive;
  naive.persistence = units.original({0.5f, 0.5f, 1.0f, 2.0f});  // series 0 is flat: persistence is exact
  naive.seasonal.assign(4, NAN);                                   // no season: left out
  naive.drift = units.original({0.5f, 0.5f, 2.0f, NAN});          // no history for the last sample
  const GroupTargets t = group_targets({0.5f, 0.5f, 2.0f, 4.0f}, units, naive);
  REQUIRE(t.baselines.size() == 2);
  CHECK(t.baselines[0].kind == "persistence");
  CHECK(t.baselines[1].kind == "drift");
  CHECK(t.baselines[0].values == std::vector<float>{0.5f, 0.5f, 1.0f, 2.0f});  // back in model units
  CHECK(t.y_original == std::vector<float>{11, 11, 5, 13});
  const GroupEvaluation e = evaluate_per_group(p, LossType::Mse, t);
  REQUIRE(e.baselines.size() == 2);
  const ScoreSet& persistence = e.baselines[0].scores;
  CHECK(persistence.members[0].values[2] == 0.0);
  CHECK(persistence.members[1].values[2] == doctest::Approx(1.5));
  CHECK(e.model.members[1].values[2] == doctest::Approx(1.5));
  // Drift: series 1 is scored on its one finite forecast (2 = 2), so its MAE is 0.
  CHECK(e.baselines[1].scores.members[1].values[2] == 0.0);
  // Original units: MAE and RMSE of each series scale by its std.
  REQUIRE(!e.original.empty());
  const float sd[2] = {2, 4};
  for (int s = 0; s < 2; ++s)
    for (int m : {1, 2}) {
      CHECK(e.original.members[s].values[m] == doctest::Approx(e.model.members[s].values[m] * sd[s]));
      CHECK(e.baselines[0].original.members[s].values[m] == doctest::Approx(persistence.members[s].values[m] * sd[s]));
    }
  // Pooled in original units mixes the scales: |1 − 4|·4 over 4 samples.
  CHECK(e.original.pooled.values[2] == doctest::Approx(12.0 / 4));
  std::vector<double> model, base;
  for (int s = 0; s < 2; ++s) {
    model.insert(model.end(), e.model.members[s].values.begin(), e.model.members[s].values.end());
    base.insert(base.end(), persistence.members[s].values.begin(), persistence.members[s].values.end());
  }
  const std::vector<BaselineComparison> c = compare_with_baseline(e.names, model, base);
  REQUIRE(c.size() == 3);
  CHECK(c[0].metric == "mae");
  CHECK(c[0].beat == 0);  // series 0 ties (0 = 0), series 1 ties (1.5 = 1.5)
  CHECK(c[0].compared == 2);
  CHECK(c[0].median_ratio == doctest::Approx(1.0));  // only series 1 has a positive baseline
  CHECK(skill_score(1.0, 4.0) == 0.75);
  CHECK(skill_score(2.0, 1.0) == -1.0);
  CHECK(std::isnan(skill_score(1.0, 0.0)));
}

namespace {

// A small stocks-lstm run: 4 series of 120 days, windows of 5, 2 epochs.
fs::path small_stocks_run(const std::string& name) {
  const fs::path out = scratch(name + ".h5");
  TrainOptions o;
  o.config_path = std::string(TURBANET_SOURCE_DIR) + "/configs/stocks-lstm.yaml";
  o.set = {"swarm.size=4", "data.source.series=4", "data.source.length=120", "data.sequence.window=5",
           "train.epochs=2", "data.sequence.transform=none"};  // original units: a scale per series
  o.out = out.string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(o) == kExitOk);
  return out;
}

bool python_can(const std::string& modules) {
  return std::system(("/usr/bin/python3 -c 'import " + modules + "' >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

TEST_CASE("eval of a per-series run: quantiles, persistence and original units in the table, JSON and file") {
  const fs::path run = small_stocks_run("stocks");
  const RunFile trained = read_run_file(run.string());
  REQUIRE(trained.evals.size() == 1);
  CHECK(trained.evals[0].per_group());
  REQUIRE(trained.evals[0].baselines.size() == 3);
  CHECK(trained.evals[0].baselines[0].kind == "persistence");
  CHECK(trained.evals[0].baselines[1].kind == "seasonal_naive");
  CHECK(trained.evals[0].baselines[2].kind == "drift");
  const Predictions* tp = trained.find_predictions("test");
  REQUIRE(tp != nullptr);
  CHECK(tp->members.data.empty());
  CHECK(tp->member.size() == tp->per_group.shape[0]);

  EvalOptions o = eval_opts(run);
  int rc = -1;
  const std::string table = capture(1, [&] { rc = run_eval(o); });
  REQUIRE(rc == kExitOk);
  MESSAGE(table);
  CHECK(table.find("series beat persistence by mae") != std::string::npos);
  CHECK(table.find("original units") != std::string::npos);
  CHECK(table.find("median") != std::string::npos);

  const RunFile r = read_run_file(run.string());
  REQUIRE(r.evals.size() == 1);
  const EvalRecord& e = r.evals[0];
  CHECK(e.combine == "own");
  CHECK(e.ensemble.empty());
  REQUIRE(e.member == std::vector<int>{0, 1, 2, 3});
  const std::size_t M = e.metrics.size();
  REQUIRE(e.baselines.size() == 3);
  const EvalRecord::Baseline& persistence = e.baselines[0];
  REQUIRE(persistence.scores.members.size() == 4 * M);
  REQUIRE(e.original.members.size() == 4 * M);
  // Standard normalization: MAE and RMSE in original units = normalized × the series' target_std.
  for (std::size_t s = 0; s < 4; ++s)
    for (std::size_t m = 1; m <= 2; ++m) {
      const double sd = r.normalization.target_std.data[s];
      CHECK(e.original.members[s * M + m] == doctest::Approx(e.members[s * M + m] * sd).epsilon(1e-4));
      CHECK(persistence.original.members[s * M + m] ==
            doctest::Approx(persistence.scores.members[s * M + m] * sd).epsilon(1e-4));
    }
  // The stored predictions: own [N, 1] with its member, persistence, and original units.
  const Predictions* p = r.find_predictions("test");
  REQUIRE(p != nullptr);
  const std::size_t N = p->member.size();
  REQUIRE(p->per_group.data.size() == N);
  REQUIRE(p->per_group_original.data.size() == N);
  REQUIRE(p->naive.size() == 3);
  CHECK(p->naive[0].kind == "persistence");
  REQUIRE(p->naive[0].values.data.size() == N);
  REQUIRE(p->naive[2].original.data.size() == N);
  for (std::size_t i = 0; i < N; ++i) {
    const auto g = static_cast<std::size_t>(p->member[i]);
    CHECK(p->per_group_original.data[i] == doctest::Approx(p->per_group.data[i] * r.normalization.target_std.data[g] +
                                                     r.normalization.target_mean.data[g]));
  }
  // Member 0's MAE from the stored predictions.
  double abs_err = 0;
  int n0 = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (p->member[i] == 0) {
      abs_err += std::abs(p->per_group.data[i] - p->targets.data[i]);
      ++n0;
    }
  CHECK(n0 == e.member_samples[0]);
  CHECK(e.members[2] == doctest::Approx(abs_err / n0).epsilon(1e-6));

  o.json = true;
  const std::string text = capture(1, [&] { rc = run_eval(o); });
  REQUIRE(rc == kExitOk);
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j["combine"] == "own");
  CHECK(!j.contains("ensemble"));
  CHECK(j["members"].size() == 4);
  CHECK(j["members"][0]["group"] == r.members.group_names[0]);
  CHECK(j["quantiles"]["mae"].size() == 7);
  CHECK(j["baseline"]["kind"] == "persistence");
  CHECK(j["vs_baseline"]["mae"]["compared"] == 4);
  CHECK(j["original_units"]["baseline"]["quantiles"]["rmse"].size() == 7);

  // The histogram script reads members/<metric> and baseline_members/<metric>.
  if (!python_can("h5py, numpy, matplotlib")) {
    MESSAGE("SKIPPED: /usr/bin/python3 lacks h5py, numpy or matplotlib");
    return;
  }
  const fs::path png = scratch("stocks-mae.png");
  const std::string cmd = "/usr/bin/python3 " + std::string(TURBANET_SOURCE_DIR) + "/scripts/plot_series_errors.py " +
                          run.string() + " --out " + png.string() + " >/dev/null 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(fs::file_size(png) > 1000);
  const std::string original = "/usr/bin/python3 " + std::string(TURBANET_SOURCE_DIR) +
                               "/scripts/plot_series_errors.py " + run.string() + " --units original --metric rmse --out " +
                               png.string() + " >/dev/null 2>&1";
  CHECK(std::system(original.c_str()) == 0);
}
