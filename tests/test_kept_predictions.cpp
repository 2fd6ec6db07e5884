// output.predictions: members | ensemble | none. What the run file keeps of the final
// evaluation's predictions, read back; eval, predict and merge of shards work with each.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "eval_test_util.h"
#include "io/run_file.h"

using namespace tn;
using namespace evaltest;

namespace {

std::string kept_yaml(const std::string& kept, int members = 5) {
  return "name: kept\nseed: 5\ndevice: cpu\nswarm: {size: " + std::to_string(members) + "}\n"
         "model: {layers: [{units: 6, activation: tanh}, {units: 2}]}\nloss: cross_entropy\n"
         "data:\n  source: {type: spirals, n: 120}\n  split: {train: 0.6, val: 0.2, test: 0.2, seed: 3}\n"
         "  per_member: bootstrap\ntrain: {epochs: 2, batch_size: 16}\n" +
         (kept.empty() ? "" : "output: {predictions: " + kept + "}\n");
}

}  // namespace

TEST_CASE("output.predictions: members by default, ensemble or none, unknown values and group_by refused") {
  const auto read = [](const std::string& extra) {
    return parse_config("model: {layers: [{units: 2}]}\ndata: {source: spirals}\n" + extra, "cfg.yaml").output.predictions;
  };
  CHECK(read("") == "members");
  CHECK(read("output: {predictions: ensemble}\n") == "ensemble");
  CHECK(read("output: {predictions: none}\n") == "none");
  const Config c = parse_config("model: {layers: [{units: 2}]}\ndata: {source: spirals}\noutput: {predictions: none}\n",
                                "cfg.yaml");
  CHECK(parse_config(to_yaml(c), "stored").output.predictions == "none");
  try {
    read("output: {predictions: ensemle}\n");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "cfg.yaml:3:23: output.predictions: unknown value 'ensemle'; allowed: members, "
                                   "ensemble, none; did you mean 'ensemble'?");
  }
  try {
    parse_config("model: {layers: [{type: gru, units: 2}, {units: 1}]}\nloss: mse\n"
                 "data:\n  source: {type: random_walk, series: 2, length: 60}\n  per_member: {group_by: ticker}\n"
                 "  sequence: {window: 4, target: close, time: date}\noutput: {predictions: ensemble}\n",
                 "cfg.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("output.predictions: group_by has one member per group and no ensemble") !=
          std::string::npos);
  }
}

TEST_CASE("output.predictions: the run file keeps every member's, the ensemble's or none, and eval reads the same") {
  const RunFile members = read_run_file(train_run("kept-members", kept_yaml("")).string());
  const fs::path ens_path = train_run("kept-ensemble", kept_yaml("ensemble"));
  const fs::path none_path = train_run("kept-none", kept_yaml("none"));
  const RunFile ensemble = read_run_file(ens_path.string()), none = read_run_file(none_path.string());
  const Predictions* m = members.find_predictions("test");
  const Predictions* e = ensemble.find_predictions("test");
  REQUIRE(m != nullptr);
  REQUIRE(e != nullptr);
  CHECK(m->members.shape == std::vector<std::uint64_t>{5, 24, 2});
  CHECK(e->members.data.empty());
  CHECK(e->ensemble_mean.data == m->ensemble_mean.data);  // the same swarm, the same ensemble
  CHECK(e->ensemble_std.data == m->ensemble_std.data);
  CHECK(e->targets.data == m->targets.data);
  CHECK(none.find_predictions("test") == nullptr);
  CHECK(none.evals.size() == 1);  // the final evaluation's metrics are stored whatever is kept
  // eval computes every member's predictions again from the parameters: the same report.
  const nlohmann::json jm = eval_json(eval_opts(scratch("kept-members.h5")));
  for (const fs::path& p : {ens_path, none_path}) {
    const nlohmann::json j = eval_json(eval_opts(p));
    CHECK(j["ensemble"] == jm["ensemble"]);
    CHECK(j["members"] == jm["members"]);
  }
  // eval --save keeps what the run keeps.
  EvalOptions save = eval_opts(none_path);
  save.save = "again";
  CHECK(run_eval(save) == kExitOk);
  const RunFile saved = read_run_file(none_path.string());
  CHECK(saved.find_predictions("again") == nullptr);
  CHECK(std::any_of(saved.evals.begin(), saved.evals.end(), [](const EvalRecord& r) { return r.split == "again"; }));
  // predict runs the members on new inputs whatever the run file kept.
  PredictOptions p;
  p.run_path = ens_path.string();
  p.input = write_file("kept-input.csv", "x,y\n0.1,0.2\n-0.5,0.3\n").string();
  p.out = scratch("kept-predictions.csv").string();
  p.force = true;
  p.verbosity = Verbosity::Quiet;
  CHECK(run_predict(p) == kExitOk);
}

TEST_CASE("output.predictions ensemble: merged shards give the whole swarm's ensemble, and say eval is needed") {
  const std::string yaml = kept_yaml("ensemble", 7);
  const RunFile whole = read_run_file(train_run("kept-whole", yaml).string());
  std::vector<std::string> parts;
  for (int k = 0; k < 2; ++k) {
    TrainOptions o;
    o.config_path = write_file("kept-shards.yaml", yaml).string();
    o.out = scratch("kept-part.h5").string();
    o.shard = std::to_string(k) + "/2";
    o.force = true;
    o.verbosity = Verbosity::Quiet;
    REQUIRE(run_train(o) == kExitOk);
    parts.push_back(scratch("kept-part.shard-" + std::to_string(k) + "-of-2.h5").string());
  }
  MergeOptions mo;
  mo.out = scratch("kept-merged.h5").string();
  mo.parts = parts;
  mo.force = true;
  const auto [rc, err] = exit_and_stderr([&] { return run_merge(mo); });
  REQUIRE(rc == kExitOk);
  CHECK(err.find("the merged file has no /eval; run turbanet eval on it") != std::string::npos);
  const RunFile merged = read_run_file(mo.out);
  const Predictions* a = merged.find_predictions("test");
  const Predictions* b = whole.find_predictions("test");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->members.data.empty());
  REQUIRE(a->ensemble_mean.data.size() == b->ensemble_mean.data.size());
  for (std::size_t i = 0; i < a->ensemble_mean.data.size(); ++i) {
    CHECK(a->ensemble_mean.data[i] == doctest::Approx(b->ensemble_mean.data[i]).epsilon(1e-5));
    CHECK(a->ensemble_std.data[i] == doctest::Approx(b->ensemble_std.data[i]).epsilon(1e-4));
  }
  CHECK(merged.evals.empty());
  const nlohmann::json j = eval_json(eval_opts(mo.out));  // eval computes it all from the parameters
  CHECK(j["members"].size() == 7);
}

TEST_CASE("output.predictions may change when a run resumes: it does not change how the swarm trains") {
  const fs::path ck = scratch("kept-resume.ckpt.h5"), out = scratch("kept-resume.h5");
  TrainOptions o;
  o.config_path = write_file("kept-resume.yaml", kept_yaml("")).string();
  o.out = out.string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  o.set = {"train.checkpoint={every_epochs: 1, path: '" + ck.string() + "'}"};
  REQUIRE(run_train(o) == kExitOk);
  o.set = {"train.epochs=3", "output.predictions=none"};
  o.resume = ck.string();
  REQUIRE(run_train(o) == kExitOk);
  const RunFile r = read_run_file(out.string());
  CHECK(r.find_predictions("test") == nullptr);
  CHECK(r.meta.epochs == 3);
}
