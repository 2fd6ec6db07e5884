// The run file's evaluation groups, data names and several prediction splits round-trip.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "eval_test_util.h"
#include "io/run_file.h"

using namespace tn;

namespace {

// Predictions of `split` with only the members' outputs and the targets.
Predictions predictions(const std::string& split, Array members, Array targets) {
  Predictions p;
  p.split = split;
  p.members = std::move(members);
  p.targets = std::move(targets);
  return p;
}

Array filled(std::vector<std::uint64_t> shape, float start) {
  Array a{std::move(shape), {}};
  for (std::uint64_t i = 0; i < a.size(); ++i) a.data.push_back(start + 0.25f * i);
  return a;
}

EvalRecord record(const std::string& split) {
  EvalRecord e;
  e.split = split;
  e.source = split + " split of spirals(n=64)";
  e.task = "classification";
  e.combine = "vote";
  e.n_samples = 3;
  e.metrics = {"accuracy", "log_loss"};
  e.member = {7, 8};
  e.members = {0.5, 0.25, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  e.member_mean = {0.5, 0.25};
  e.member_std = {0.0, 0.0};
  e.ensemble = {2.0 / 3, 0.125};
  e.excluded = {8};
  e.member_confusion = filled({2, 2, 2}, 0);
  e.member_mean_confusion = filled({2, 2}, 1);
  e.ensemble_confusion = filled({2, 2}, 2);
  e.ensemble_prediction = filled({3, 2}, 0.1f);
  e.entropy = filled({3}, 0.2f);
  e.mutual_information = filled({3}, 0.01f);
  e.disagreement = filled({3}, 0);
  return e;
}

bool same_doubles(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

void check_array(const Array& got, const Array& want) {
  CHECK(got.shape == want.shape);
  CHECK(got.data == want.data);
}

}  // namespace

TEST_CASE("run file: evaluations, data names and several prediction splits round-trip") {
  RunFile run;
  run.config_yaml = "name: e\n";
  run.meta.swarm_size = 2;
  run.params = {{{{"W", filled({2, 2, 3}, 0)}, {"b", filled({2, 3}, 1)}}}};
  run.data.feature_names = {"x", "y"};
  run.data.class_names = {"left", "right"};
  run.data.target = "cls";
  run.put(predictions("test", filled({2, 3, 2}, 0), filled({3}, 0)));
  run.put(predictions("all", filled({2, 5, 2}, 1), filled({5}, 0)));
  run.put(predictions("test", filled({2, 3, 2}, 9), filled({3}, 1)));  // replaces the first
  run.put(record("test"));
  EvalRecord regression = record("val");
  regression.task = "regression";
  regression.member_confusion = regression.member_mean_confusion = regression.ensemble_confusion = {};
  regression.entropy = regression.mutual_information = regression.disagreement = {};
  regression.excluded = {};
  run.put(regression);
  REQUIRE(run.predictions.size() == 2);

  const std::string path = evaltest::scratch("evals.h5").string();
  write_run_file(path, run);
  const RunFile got = read_run_file(path);
  CHECK(got.data.feature_names == run.data.feature_names);
  CHECK(got.data.class_names == run.data.class_names);
  CHECK(got.data.target == "cls");
  REQUIRE(got.predictions.size() == 2);  // in name order
  CHECK(got.find_predictions("test")->members.data == run.find_predictions("test")->members.data);
  CHECK(got.find_predictions("all")->targets.data.size() == 5);
  REQUIRE(got.evals.size() == 2);
  for (const EvalRecord& e : got.evals) {
    const EvalRecord& want = e.split == "test" ? run.evals[0] : run.evals[1];
    INFO(e.split);
    CHECK(e.source == want.source);
    CHECK(e.task == want.task);
    CHECK(e.combine == want.combine);
    CHECK(e.n_samples == want.n_samples);
    CHECK(e.metrics == want.metrics);
    CHECK(e.member == want.member);
    CHECK(same_doubles(e.members, want.members));  // NaN included, bit for bit
    CHECK(same_doubles(e.member_mean, want.member_mean));
    CHECK(same_doubles(e.member_std, want.member_std));
    CHECK(same_doubles(e.ensemble, want.ensemble));
    CHECK(e.excluded == want.excluded);
    check_array(e.member_confusion, want.member_confusion);
    check_array(e.member_mean_confusion, want.member_mean_confusion);
    check_array(e.ensemble_confusion, want.ensemble_confusion);
    check_array(e.ensemble_prediction, want.ensemble_prediction);
    check_array(e.entropy, want.entropy);
    check_array(e.disagreement, want.disagreement);
  }
}

TEST_CASE("run file: an evaluation whose values do not match its metrics is refused before writing") {
  RunFile run;
  run.config_yaml = "name: e\n";
  run.params = {{{{"W", filled({1, 1, 1}, 0)}, {"b", filled({1, 1}, 0)}}}};
  EvalRecord e = record("test");
  e.ensemble.pop_back();
  run.put(e);
  const std::string path = evaltest::scratch("bad-eval.h5").string();
  CHECK_THROWS_WITH_AS(write_run_file(path, run), doctest::Contains("/eval/test: metric values do not match"),
                       RunFileError);
  CHECK_FALSE(std::filesystem::exists(path));
}
