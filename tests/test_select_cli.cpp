// Choosing on the validation split, scoring on the test split: the best member train logs and
// eval reports, the ensemble config `ensemble` chooses when training and --select chooses in
// eval, predict and export, eval --threshold auto; the config and command errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "config_test_util.h"
#include "eval/metrics.h"
#include "eval/select.h"
#include "eval_test_util.h"
#include "export/export_run.h"
#include "io/prediction_file.h"
#include "io/run_file.h"
#include "run/evaluate_run.h"

using namespace tn;
using namespace evaltest;
using nlohmann::json;

namespace {

// A spirals swarm over a learning-rate grid (1e-4 .. 0.3): members from useless to good.
std::string grid_yaml(const std::string& extra = "", int members = 8, int seed = 3) {
  std::string yaml = spirals_yaml(members, 25, extra);
  const std::string plain = "optimizer: {type: adam, lr: 0.02}";
  yaml.replace(yaml.find(plain), plain.size(),
               "optimizer: {type: adam, lr: {logspace: [1.0e-4, 0.3]}}");
  yaml.replace(yaml.find("seed: 3"), 7, "seed: " + std::to_string(seed));
  return yaml;
}

json eval_split(const fs::path& run, const std::string& split) {
  EvalOptions o = eval_opts(run);
  o.split = split;
  return eval_json(o);
}

// The member rank_members puts first in an eval JSON: highest accuracy, then lowest log loss.
int best_of(const json& j) {
  int best = -1;
  for (const json& m : j["members"]) {
    if (m["excluded"].get<bool>()) continue;
    if (best < 0) {
      best = m["member"];
      continue;
    }
    const json& b = j["members"][best];
    const double a = m["accuracy"], ab = b["accuracy"], l = m["log_loss"], lb = b["log_loss"];
    if (a > ab || (a == ab && l < lb)) best = m["member"];
  }
  return best;
}

// The members with the k lowest values of `metric` in an eval JSON (ties: member order).
std::vector<int> lowest(const json& j, const std::string& metric, std::size_t k) {
  std::vector<int> order;
  for (const json& m : j["members"])
    if (!m["excluded"].get<bool>()) order.push_back(m["member"]);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return j["members"][a][metric].get<double>() < j["members"][b][metric].get<double>();
  });
  order.resize(std::min(order.size(), k));
  return order;
}

SwarmPredictions stored_predictions(const Predictions& p) {
  return {static_cast<int>(p.members.shape[0]), static_cast<int>(p.members.shape[1]),
          static_cast<int>(p.members.shape[2]), p.members.data, {}};
}

}  // namespace

TEST_CASE("the best member is chosen on the validation split and scored on the test split, in train's log and eval") {
  const fs::path cfg = write_file("select-best.yaml", grid_yaml("", 8, 4));  // seed 4: val and test disagree
  const fs::path run = scratch("select-best.h5");
  TrainOptions t;
  t.config_path = cfg.string();
  t.out = run.string();
  t.force = true;
  int rc = -1;
  const std::string log = tn::test::logged([&] { rc = run_train(t); });
  REQUIRE(rc == kExitOk);
  const json val = eval_split(run, "val"), test = eval_json(eval_opts(run));
  const int on_val = best_of(val), on_test = best_of(test);
  REQUIRE_MESSAGE(on_val != on_test, "the test needs a run whose val and test splits prefer different members");
  // eval: the validation split's best, with its test metrics beside its validation ones.
  const json& best = test["best_member"];
  CHECK(best["chosen_on"] == "val");
  CHECK(best["member"] == on_val);
  CHECK(best["chosen_on_metrics"]["accuracy"] == val["members"][on_val]["accuracy"]);
  CHECK(best["metrics"]["accuracy"] == test["members"][on_val]["accuracy"]);
  CHECK(test["hparams"]["best"]["log_loss"]["member"] == lowest(val, "log_loss", 1).front());
  CHECK(test["hparams"]["best"]["log_loss"]["chosen_on"] == "val");
  // train's log line names the same member with both scores.
  const std::string line = fmt::format("best on the val split #{}: val {:.4f}, test {:.4f}", on_val,
                                       val["members"][on_val]["accuracy"].get<double>(),
                                       test["members"][on_val]["accuracy"].get<double>());
  CHECK_MESSAGE(log.find(line) != std::string::npos, log);
  // The table says where members were ranked; the search view's best is the same member.
  const std::string table = capture(1, [&] { run_eval(eval_opts(run)); });
  CHECK(table.find("members ranked on the val split by accuracy (ties: log_loss)") != std::string::npos);
  CHECK(table.find(fmt::format("best #{}", on_val)) != std::string::npos);
}

TEST_CASE("ensemble: {select: greedy} is chosen on the validation split when training and used by eval, predict and export") {
  const fs::path run = train_run("select-greedy", grid_yaml("ensemble: {select: greedy, k: 12}\n"));
  const RunFile r = read_run_file(run.string());
  REQUIRE(r.ensemble.present());
  CHECK(r.ensemble.method == "greedy");
  CHECK(r.ensemble.k == 12);
  CHECK(r.ensemble.metric == "log_loss");
  CHECK(r.ensemble.split == "val");
  double total = 0;
  for (double w : r.ensemble.weight) total += w;
  CHECK(total == doctest::Approx(1.0));
  // The same choice made here on the validation split's predictions.
  EvalOptions v = eval_opts(run);
  v.split = "val";
  v.select = "all";
  v.save = "val-all";
  capture(1, [&] { REQUIRE(run_eval(v) == kExitOk); });
  const RunFile saved = read_run_file(run.string());
  const Predictions* vp = saved.find_predictions("val-all");
  REQUIRE(vp != nullptr);
  const SwarmPredictions p = stored_predictions(*vp);
  const Evaluation ve = evaluate(p, LossType::CrossEntropy, vp->targets.data, Combine::MeanProb);
  const Selection s = select_members(p, ve, LossType::CrossEntropy, vp->targets.data, Combine::MeanProb,
                                     parse_select("greedy:12"));
  CHECK(s.members == r.ensemble.member);  // first member 0
  CHECK(s.value == doctest::Approx(r.ensemble.value));
  // train's test record and eval's ensemble are the weighted ensemble of those members.
  const Predictions* tp = r.find_predictions("test");
  REQUIRE(tp != nullptr);
  const std::vector<double> w = s.weights(8);
  const Metrics want = ensemble_metrics(stored_predictions(*tp), LossType::CrossEntropy, tp->targets.data,
                                        Combine::MeanProb, &w, std::nan(""));
  const json j = eval_json(eval_opts(run));
  CHECK(j["ensemble"]["log_loss"].get<double>() == doctest::Approx(want.values[7]));
  CHECK(r.evals.front().selection.member == r.ensemble.member);
  CHECK(j["ensemble_selection"]["members"] == r.ensemble.member);
  CHECK(j["ensemble_selection"]["weights"] == r.ensemble.weight);
  // --select all overrides it: the ensemble of every member.
  EvalOptions all = eval_opts(run);
  all.select = "all";
  const json ja = eval_json(all);
  CHECK(ja["ensemble_selection"].is_null());
  CHECK(ja["ensemble"]["log_loss"].get<double>() == doctest::Approx(j["ensemble_selection"]["all_members_ensemble"]["log_loss"].get<double>()));
  // predict: the selected members, weighted, and the record of them.
  const fs::path csv = write_file("select-input.csv", "x,y\n0.1,0.2\n-0.5,0.3\n0.7,-0.9\n");
  PredictOptions po;
  po.run_path = run.string();
  po.input = csv.string();
  po.out = scratch("select-pred.h5").string();
  po.force = true;
  po.verbosity = Verbosity::Quiet;
  REQUIRE(run_predict(po) == kExitOk);
  const PredictionFile pf = read_prediction_file(*po.out);
  CHECK(pf.member == r.ensemble.member);
  CHECK(pf.selection.weight == r.ensemble.weight);
  REQUIRE(pf.members.shape == std::vector<std::uint64_t>{r.ensemble.member.size(), 3, 2});
  for (std::size_t i = 0; i < 3 * 2; ++i) {
    double mean = 0;
    for (std::size_t m = 0; m < pf.member.size(); ++m) mean += r.ensemble.weight[m] * pf.members.data[m * 6 + i];
    CHECK(pf.ensemble.data[i] == doctest::Approx(mean).epsilon(1e-5));
  }
  // export: the selected members and their weights.
  const ExportedModel m = build_export(run.string(), ExportFormat::Npz, {});
  CHECK(m.members == r.ensemble.member);
  CHECK(m.selection.weight == r.ensemble.weight);
}

TEST_CASE("--select top:K --select-by METRIC chooses on the validation split in eval, predict and export") {
  const fs::path run = train_run("select-top", grid_yaml());
  CHECK_FALSE(read_run_file(run.string()).ensemble.present());
  const json val = eval_split(run, "val");
  const std::vector<int> want = lowest(val, "brier", 3);
  EvalOptions o = eval_opts(run);
  o.select = "top:3";
  o.select_by = "brier";
  const json j = eval_json(o);
  CHECK(j["ensemble_selection"]["members"] == want);
  CHECK(j["ensemble_selection"]["metric"] == "brier");
  CHECK(j["ensemble_selection"]["chosen_on"] == "val");
  CHECK(j["ensemble_selection"]["weights"] == std::vector<double>(3, 1.0 / 3));
  // Without --select-by: the loss's metric, log_loss.
  o.select_by.reset();
  CHECK(eval_json(o)["ensemble_selection"]["members"] == lowest(val, "log_loss", 3));
  // predict and export choose the same members.
  const fs::path csv = write_file("select-top.csv", "x,y\n0.1,0.2\n");
  PredictOptions po;
  po.run_path = run.string();
  po.input = csv.string();
  po.select = "top:3";
  po.select_by = "brier";
  po.verbosity = Verbosity::Quiet;
  const std::string out = capture(1, [&] { REQUIRE(run_predict(po) == kExitOk); });
  CHECK(out.substr(0, out.find('\n')) == fmt::format("row,prediction,p_0,p_1,entropy,mutual_information,disagreement,"
                                                     "member_{},member_{},member_{}", want[0], want[1], want[2]));
  SelectSpec spec = parse_select("top:3");
  spec.metric = "brier";
  CHECK(build_export(run.string(), ExportFormat::Onnx, {}, spec).members == want);
}

TEST_CASE("eval --threshold auto: each member's and the ensemble's F1-maximizing threshold on the validation split") {
  const fs::path run = train_run("select-threshold", grid_yaml());
  EvalRequest req;
  req.run_path = run.string();
  req.select = parse_select("all");
  req.split = "val";
  const EvalOutcome on_val = evaluate_stored(req);  // the validation split's predictions and labels
  req.split.reset();
  req.threshold_auto = true;
  const EvalOutcome o = evaluate_stored(req);
  const Predictions& p = on_val.predictions;
  std::vector<int> labels(p.targets.data.begin(), p.targets.data.end());
  const int N = static_cast<int>(labels.size());
  CHECK(o.record.threshold_from == "val");
  CHECK(o.record.threshold == f1_threshold(p.ensemble_mean.data.data(), labels.data(), N));
  std::vector<float> member2(p.members.data.begin() + 2 * N * 2, p.members.data.begin() + 3 * N * 2);
  CHECK(o.record.member_threshold[2] == f1_threshold(member2.data(), labels.data(), N));
  // A fixed threshold for everyone, printed and in the JSON.
  EvalOptions e = eval_opts(run);
  e.threshold = "0.3";
  const json j = eval_json(e);
  CHECK(j["threshold"]["from"] == "fixed");
  CHECK(j["threshold"]["ensemble"] == 0.3);
  e.threshold = "auto";
  e.json = false;
  e.save = "test-f1";
  const std::string table = capture(1, [&] { run_eval(e); });
  CHECK(table.find("decision threshold of class 1: ensemble") != std::string::npos);
  CHECK(table.find("each F1-maximizing on the val split") != std::string::npos);
  // --save keeps the thresholds with the record.
  const RunFile saved = read_run_file(run.string());
  const auto rec = std::find_if(saved.evals.begin(), saved.evals.end(), [](const EvalRecord& x) { return x.split == "test-f1"; });
  REQUIRE(rec != saved.evals.end());
  CHECK(rec->threshold_from == "val");
  CHECK(rec->threshold == o.record.threshold);
  CHECK(rec->member_threshold == o.record.member_threshold);
}

TEST_CASE("--select, --select-by and --threshold refuse what a run cannot do, exit 2 and write nothing") {
  const fs::path run = train_run("select-errors", grid_yaml("", 4));
  const auto fails = [&](EvalOptions o, const std::string& text) {
    const auto [rc, err] = exit_and_stderr([&] { return run_eval(o); });
    CHECK(rc == kExitUsage);
    CHECK_MESSAGE(err.find(text) != std::string::npos, err);
  };
  EvalOptions o = eval_opts(run);
  o.select = "top:0";
  fails(o, "--select: 'top:0' is not a selection; use all, top:K");
  o.select = "top:2";
  o.select_by = "acuracy";
  fails(o, "--select-by: 'acuracy' is not a metric of this run; its metrics: accuracy,");
  o.select.reset();
  fails(o, "--select-by acuracy chooses the members of --select top:K or greedy[:K]");
  o = eval_opts(run);
  o.threshold = "1.5";
  fails(o, "--threshold: '1.5' is neither auto");
  o.threshold = "auto";
  o.combine = "vote";
  fails(o, "--combine vote decides by counting votes");
  const fs::path reg = train_run("select-errors-reg", "name: r\nseed: 1\nswarm: {size: 2}\nmodel:\n  layers:\n"
                                                      "    - {type: dense, units: 4, activation: tanh}\n    - {type: dense, units: 1}\n"
                                                      "loss: mse\ndata:\n  source: {type: sine, n: 80}\n"
                                                      "  split: {train: 0.6, val: 0.2, test: 0.2}\ntrain: {epochs: 2}\n");
  EvalOptions r = eval_opts(reg);
  r.threshold = "0.5";
  fails(r, "--threshold: a decision threshold needs a two-class run; this one is a regression");
  ExportOptions x;
  x.run_path = run.string();
  x.out = scratch("select-errors.onnx").string();
  x.member = 1;
  x.select = "top:2";
  x.verbosity = Verbosity::Quiet;
  const auto [rc, err] = exit_and_stderr([&] { return run_export(x); });
  CHECK(rc == kExitUsage);
  CHECK(err.find("--select chooses the members of the ensemble; --member 1 exports one member alone") != std::string::npos);
  CHECK_FALSE(fs::exists(x.out));
}

TEST_CASE("config ensemble: its keys checked where they are written, and kept by the run file's config") {
  using tn::test::error_of;
  using tn::test::with;
  const std::string swarm = "swarm: {size: 4}\n";
  CHECK(error_of(with(swarm + "ensemble: {select: top}\n")).find("ensemble.k: missing required key") != std::string::npos);
  CHECK(error_of(with(swarm + "ensemble: {select: top, k: 5}\n"))
            .find("ensemble.k: keeps 5 members, but the swarm has 4 (swarm.size)") != std::string::npos);
  CHECK(error_of(with(swarm + "ensemble: {select: greedy, metric: acuracy}\n"))
            .find("'acuracy' is not a classification metric (did you mean 'accuracy'?)") != std::string::npos);
  CHECK(error_of(with(swarm + "ensemble: {select: greedy, metric: roc_auc}\nloss: mse\n"))
            .find("'roc_auc' is not a regression metric") != std::string::npos);
  CHECK(error_of(with(swarm + "ensemble: {select: all, k: 3}\n")).find("ensemble.k") != std::string::npos);
  CHECK(error_of(with(swarm + "ensemble: {select: best}\n")).find("ensemble.select") != std::string::npos);
  const Config c = tn::test::parse(with(swarm + "ensemble: {select: greedy, k: 7, metric: brier}\n"));
  CHECK(c.ensemble.select == "greedy");
  CHECK(c.ensemble.k == 7);
  CHECK(c.ensemble.metric == "brier");
  const Config back = tn::test::parse(to_yaml(c));
  CHECK(back.ensemble.select == "greedy");
  CHECK(back.ensemble.k == 7);
  CHECK(back.ensemble.metric == "brier");
  CHECK_FALSE(tn::test::parse(tn::test::kMinimal).ensemble.enabled());
}
