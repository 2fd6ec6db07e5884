// Metrics and ensemble statistics against values scikit-learn/SciPy computed
// (tests/data/metric_fixture.json, written by scripts/make_metric_fixture.py), plus edge cases.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/evaluate.h"

using namespace tn;
using nlohmann::json;

namespace {

const json& fixture() {
  static const json j = [] {
    std::ifstream in(std::string(TURBANET_SOURCE_DIR) + "/tests/data/metric_fixture.json");
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return j;
}

// Row-major floats of a nested JSON array.
std::vector<float> flat(const json& a) {
  std::vector<float> out;
  if (!a.is_array()) return {a.get<float>()};
  for (const json& x : a) {
    const std::vector<float> inner = flat(x);
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

std::size_t index_of(const std::vector<std::string>& names, const std::string& name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  FAIL("no metric " << name);
  return 0;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("classification metrics match scikit-learn") {
  for (const json& c : fixture()["classification"]) {
    INFO(c["name"].get<std::string>());
    const int K = c["K"];
    const std::vector<int> labels = c["labels"].get<std::vector<int>>();
    const std::vector<float> P = flat(c["probs"]);
    const int N = static_cast<int>(labels.size());
    std::vector<int> pred(N);
    for (int i = 0; i < N; ++i) pred[i] = argmax(&P[static_cast<std::size_t>(i) * K], K);
    const Metrics m = classification_metrics(P.data(), pred.data(), labels.data(), N, K);
    const std::vector<std::string>& names = classification_metric_names(K);
    REQUIRE(m.values.size() == names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      INFO(names[i]);
      CHECK(m.values[i] == doctest::Approx(c["expected"][names[i]].get<double>()).epsilon(1e-6));
    }
    const std::vector<float> confusion = flat(c["expected"]["confusion"]);
    REQUIRE(m.confusion.size() == confusion.size());
    for (std::size_t i = 0; i < confusion.size(); ++i) CHECK(m.confusion[i] == confusion[i]);
  }
}

TEST_CASE("a class that is never predicted has precision 0, and absent classes are skipped") {
  // Three samples of class 0 and 1, all predicted 0: precision(1) is 0/0 -> 0.
  const std::vector<float> P = {0.9f, 0.1f, 0.0f, 0.8f, 0.2f, 0.0f, 0.6f, 0.4f, 0.0f};
  const std::vector<int> pred = {0, 0, 0}, labels = {0, 1, 1};
  const Metrics m = classification_metrics(P.data(), pred.data(), labels.data(), 3, 3);
  const auto& names = classification_metric_names(3);
  // Classes 0 and 1 count (class 2 occurs nowhere): precision (1/3 + 0) / 2, recall (1 + 0) / 2.
  CHECK(m.values[index_of(names, "precision_macro")] == doctest::Approx(1.0 / 6));
  CHECK(m.values[index_of(names, "recall_macro")] == doctest::Approx(0.5));
  CHECK(m.values[index_of(names, "f1_macro")] == doctest::Approx(0.25));
  CHECK(m.values[index_of(names, "accuracy")] == doctest::Approx(1.0 / 3));
}

TEST_CASE("binary metrics and the F1-maximizing threshold match scikit-learn, ties included") {
  for (const json& c : fixture()["binary"]) {
    INFO(c["name"].get<std::string>());
    const std::vector<int> labels = c["labels"].get<std::vector<int>>();
    const std::vector<float> P = flat(c["probs"]);
    const int N = static_cast<int>(labels.size());
    const json& x = c["expected"];
    std::vector<int> pred(N);
    for (int i = 0; i < N; ++i) pred[i] = argmax(&P[2 * static_cast<std::size_t>(i)], 2);
    const Metrics m = classification_metrics(P.data(), pred.data(), labels.data(), N, 2);
    const std::vector<std::string>& names = classification_metric_names(2);
    for (const char* name : {"roc_auc", "pr_auc", "f1_positive", "accuracy", "log_loss"})
      CHECK(m.values[index_of(names, name)] == doctest::Approx(x[name].get<double>()).epsilon(1e-9));
    const double t = f1_threshold(P.data(), labels.data(), N);
    CHECK(t == x["best_threshold"].get<double>());
    // The threshold at work: the swarm's one member and its ensemble decide by it.
    SwarmPredictions p;
    p.S = 1;
    p.N = N;
    p.O = 2;
    p.outputs = P;
    const std::vector<float> y(labels.begin(), labels.end());
    const Thresholds tuned = f1_thresholds(p, LossType::CrossEntropy, y, Combine::MeanProb);
    CHECK(tuned.members[0] == t);
    CHECK(tuned.ensemble == t);
    const Thresholds fixed = same_threshold(1, x["threshold"].get<double>());
    const Evaluation e = evaluate(p, LossType::CrossEntropy, y, Combine::MeanProb, &fixed);
    const json& at = x["at_threshold"];
    const std::vector<float> confusion = flat(at["confusion"]);
    for (const Metrics* r : {&e.members[0], &e.ensemble}) {
      CHECK(r->values[index_of(e.names, "accuracy")] == doctest::Approx(at["accuracy"].get<double>()));
      CHECK(r->values[index_of(e.names, "f1_positive")] == doctest::Approx(at["f1_positive"].get<double>()));
      CHECK(r->confusion == std::vector<double>(confusion.begin(), confusion.end()));
    }
    const Evaluation best = evaluate(p, LossType::CrossEntropy, y, Combine::MeanProb, &tuned);
    CHECK(best.ensemble.values[index_of(best.names, "f1_positive")] == doctest::Approx(x["best_f1"].get<double>()));
  }
}

TEST_CASE("binary metrics of one class only are NaN, and more than two classes have none") {
  const std::vector<float> P = {0.9f, 0.1f, 0.3f, 0.7f};
  const std::vector<int> pred = {0, 1}, labels = {0, 0};
  const Metrics m = classification_metrics(P.data(), pred.data(), labels.data(), 2, 2);
  const auto& names = classification_metric_names(2);
  CHECK(std::isnan(m.values[index_of(names, "roc_auc")]));
  CHECK(std::isnan(m.values[index_of(names, "pr_auc")]));
  CHECK(m.values[index_of(names, "f1_positive")] == 0.0);
  CHECK(f1_threshold(P.data(), labels.data(), 2) == 0.5);
  CHECK(classification_metric_names(3).size() + 3 == names.size());
}

TEST_CASE("regression metrics match scikit-learn") {
  for (const json& c : fixture()["regression"]) {
    INFO(c["name"].get<std::string>());
    const int O = c["O"];
    const std::vector<float> y = flat(c["y_true"]), yhat = flat(c["y_pred"]);
    const int N = static_cast<int>(y.size()) / O;
    const Metrics m = regression_metrics(yhat.data(), y.data(), N, O);
    const std::vector<std::string>& names = regression_metric_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      INFO(names[i]);
      CHECK(m.values[i] == doctest::Approx(c["expected"][names[i]].get<double>()).epsilon(1e-6));
    }
  }
}

namespace {

// The fixture's swarm: member 2 diverged (NaN in one probability row and one logit).
SwarmPredictions fixture_swarm() {
  const json& w = fixture()["swarm"];
  SwarmPredictions p;
  p.S = w["S"];
  p.N = w["N"];
  p.O = w["K"];
  p.outputs = flat(w["probs"]);
  p.logits = flat(w["logits"]);
  const int s = w["prob_nan_row"][0], i = w["prob_nan_row"][1];
  for (int k = 0; k < p.O; ++k) p.outputs[(static_cast<std::size_t>(s) * p.N + i) * p.O + k] = kNaN;
  const auto& l = w["logit_nan"];
  p.logits[(static_cast<std::size_t>(l[0].get<int>()) * p.N + l[1].get<int>()) * p.O + l[2].get<int>()] = kNaN;
  return p;
}

}  // namespace

TEST_CASE("ensemble combination and per-sample uncertainty match NumPy/SciPy") {
  const json& w = fixture()["swarm"];
  const SwarmPredictions p = fixture_swarm();
  const std::vector<float> labels = flat(w["labels"]);
  for (Combine how : {Combine::MeanProb, Combine::Vote, Combine::MeanLogit}) {
    const std::string name = to_string(how);
    INFO(name);
    const json& want = w["ensembles"][name];
    const Evaluation e = evaluate(p, LossType::CrossEntropy, labels, how);
    CHECK(e.combined.excluded == w["excluded"].get<std::vector<int>>());
    const std::vector<float> probs = flat(want["probs"]);
    REQUIRE(e.combined.prediction.size() == probs.size());
    for (std::size_t i = 0; i < probs.size(); ++i) CHECK(e.combined.prediction[i] == doctest::Approx(probs[i]).epsilon(1e-5));
    CHECK(e.combined.label == want["labels"].get<std::vector<int>>());
    const std::vector<float> disagreement = flat(want["disagreement"]);
    for (int i = 0; i < p.N; ++i) CHECK(e.combined.disagreement[i] == doctest::Approx(disagreement[i]));
    CHECK(e.ensemble.values[0] == doctest::Approx(want["accuracy"].get<double>()));
    // Entropy and mutual information come from the mean probability whatever the combination.
    const std::vector<float> h = flat(w["entropy"]), mi = flat(w["mutual_information"]);
    for (int i = 0; i < p.N; ++i) {
      CHECK(e.combined.entropy[i] == doctest::Approx(h[i]).epsilon(1e-5));
      CHECK(e.combined.mutual_information[i] == doctest::Approx(mi[i]).epsilon(1e-4));
    }
    CHECK(e.member_mean.values[0] == doctest::Approx(w["member_accuracy_mean"].get<double>()));
    CHECK(e.member_std.values[0] == doctest::Approx(w["member_accuracy_std"].get<double>()));
    CHECK(std::isnan(e.members[2].values[0]));  // the diverged member has no metrics
  }
}

TEST_CASE("a single member: no spread, no mutual information, no disagreement") {
  SwarmPredictions p = fixture_swarm();
  p.S = 1;
  p.outputs.resize(static_cast<std::size_t>(p.N) * p.O);
  const Evaluation e = evaluate(p, LossType::CrossEntropy, flat(fixture()["swarm"]["labels"]), Combine::MeanProb);
  for (double sd : e.member_std.values) CHECK(sd == 0.0);
  for (int i = 0; i < p.N; ++i) {
    CHECK(e.combined.mutual_information[i] == 0.0f);
    CHECK(e.combined.disagreement[i] == 0.0f);
  }
  CHECK(e.ensemble.values == e.members[0].values);
  CHECK(rank_members(e) == std::vector<int>{0});
}

TEST_CASE("bce outputs are the probability of class 1, mean_logit averages logits") {
  SwarmPredictions p;
  p.S = 2;
  p.N = 2;
  p.O = 1;
  p.logits = {2.0f, -1.0f, 0.0f, -3.0f};
  for (float z : p.logits) p.outputs.push_back(1.0f / (1.0f + std::exp(-z)));
  const std::vector<float> labels = {1, 0};
  const Evaluation e = evaluate(p, LossType::Bce, labels, Combine::MeanLogit);
  REQUIRE(e.combined.K == 2);
  CHECK(e.combined.prediction[1] == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))));  // σ(mean(2, 0))
  CHECK(e.combined.prediction[0] == doctest::Approx(1.0 - 1.0 / (1.0 + std::exp(-1.0))));
  CHECK(e.combined.label == std::vector<int>{1, 0});
  CHECK(e.ensemble.confusion == std::vector<double>{1, 0, 0, 1});
  const Metrics m0 = e.members[1];  // member 1: p(class 1) = σ(0) = 0.5 on sample 0, ties go to class 0
  CHECK(m0.values[0] == doctest::Approx(0.5));
}

TEST_CASE("regression: the ensemble is the mean, members are ranked by MSE") {
  SwarmPredictions p;
  p.S = 3;
  p.N = 2;
  p.O = 1;
  p.outputs = {1.0f, 2.0f, 3.0f, 4.0f, kNaN, 0.0f};
  const std::vector<float> y = {1.0f, 3.0f};
  const Evaluation e = evaluate(p, LossType::Mse, y, Combine::MeanProb);
  CHECK(e.combined.excluded == std::vector<int>{2});
  CHECK(e.combined.prediction == std::vector<float>{2.0f, 3.0f});
  CHECK(e.ensemble.values[0] == doctest::Approx(0.5));        // ((2-1)² + 0) / 2
  CHECK(e.members[0].values[0] == doctest::Approx(0.5));      // (0 + 1) / 2
  CHECK(e.members[1].values[0] == doctest::Approx(2.5));      // (4 + 1) / 2
  CHECK(e.member_mean.values[0] == doctest::Approx(1.5));
  CHECK(e.member_std.values[0] == doctest::Approx(1.0));
  CHECK(rank_members(e) == std::vector<int>{0, 1});
  CHECK(e.combined.entropy.empty());
}

TEST_CASE("with every member diverged the ensemble is NaN") {
  SwarmPredictions p;
  p.S = 2;
  p.N = 1;
  p.O = 2;
  p.outputs = {kNaN, kNaN, 0.5f, std::numeric_limits<float>::infinity()};
  const Evaluation e = evaluate(p, LossType::CrossEntropy, {0.0f}, Combine::MeanProb);
  CHECK(e.combined.excluded == std::vector<int>{0, 1});
  CHECK(std::isnan(e.ensemble.values[0]));
  CHECK(std::isnan(e.member_mean.values[0]));
  CHECK(std::isnan(e.combined.entropy[0]));
  CHECK(rank_members(e).empty());
}
