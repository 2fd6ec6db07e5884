// Ensemble selection (eval/select.h) on hand-worked predictions: the top k, Caruana's greedy
// forward selection with replacement and its best prefix, the weighted ensemble it makes,
// and the --select forms.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "eval/by_hparam.h"
#include "eval/ensemble.h"
#include "eval/select.h"

using namespace tn;

namespace {

// Three regression members on two samples whose targets are both 0: constant predictions 1,
// -2 and 3 (MSE 1, 4 and 9).
SwarmPredictions three_constant_members() {
  SwarmPredictions p;
  p.S = 3;
  p.N = 2;
  p.O = 1;
  p.outputs = {1.0f, 1.0f, -2.0f, -2.0f, 3.0f, 3.0f};
  return p;
}

const std::vector<float> kZeros = {0.0f, 0.0f};

Selection choose(const SwarmPredictions& p, const std::string& spec, const std::string& metric = "mse") {
  SelectSpec s = parse_select(spec);
  s.metric = metric;
  const Evaluation e = evaluate(p, LossType::Mse, kZeros, Combine::MeanProb);
  return select_members(p, e, LossType::Mse, kZeros, Combine::MeanProb, s);
}

}  // namespace

TEST_CASE("select top:K keeps the K members with the best metric, best first, weighted alike") {
  const Selection s = choose(three_constant_members(), "top:2");
  CHECK(s.members == std::vector<int>{0, 1});
  CHECK(s.counts == std::vector<int>{1, 1});
  CHECK(s.weights(3) == std::vector<double>{0.5, 0.5, 0.0});
  CHECK(s.value == doctest::Approx(0.25));  // mean prediction -0.5: MSE 0.25
  CHECK(choose(three_constant_members(), "top:1", "mae").members == std::vector<int>{0});  // MAE 1, 2, 3
  CHECK(choose(three_constant_members(), "top:9").members.size() == 3);  // capped at the members
}

TEST_CASE("greedy selection adds the member that most improves the ensemble, repeats allowed, and keeps the best prefix") {
  // Round 1: member 0 alone (MSE 1). Round 2: {0, 1} has mean -0.5 (MSE 0.25), better than
  // {0, 0} (1) and {0, 2} (4). Round 3: {0, 1, 0} has mean 0 (MSE 0): member 0 again. Round 4:
  // the best addition, member 0 once more, gives mean 0.25 (MSE 0.0625), worse than round 3,
  // so the ensemble of the first three rounds is kept: member 0 twice, member 1 once.
  const Selection s = choose(three_constant_members(), "greedy:4");
  REQUIRE(s.rounds.size() == 4);
  CHECK(s.rounds[0] == doctest::Approx(1.0));
  CHECK(s.rounds[1] == doctest::Approx(0.25));
  CHECK(s.rounds[2] == doctest::Approx(0.0));
  CHECK(s.rounds[3] == doctest::Approx(0.0625));
  CHECK(s.members == std::vector<int>{0, 1});
  CHECK(s.counts == std::vector<int>{2, 1});
  const std::vector<double> w = s.weights(3);
  CHECK(w[0] == doctest::Approx(2.0 / 3));
  CHECK(w[1] == doctest::Approx(1.0 / 3));
  CHECK(w[2] == 0.0);
  CHECK(s.value == doctest::Approx(0.0));
  CHECK(s.k == 4);
  CHECK(choose(three_constant_members(), "greedy").k == kGreedyRounds);
}

TEST_CASE("selection leaves out members with non-finite predictions and refuses a metric the task lacks") {
  SwarmPredictions p = three_constant_members();
  p.outputs[0] = std::numeric_limits<float>::quiet_NaN();  // member 0 diverged
  CHECK(choose(p, "top:1").members == std::vector<int>{1});
  CHECK(choose(p, "greedy:3").members == std::vector<int>{1, 2});  // -2, 3 then -2: mean -1/3
  CHECK_THROWS_WITH_AS(choose(p, "top:1", "accuracy"),
                       "'accuracy' is not a metric of this run; its metrics: mse, rmse, mae, r2", std::invalid_argument);
  CHECK(loss_metric(LossType::CrossEntropy) == "log_loss");
  CHECK(loss_metric(LossType::Bce) == "log_loss");
  CHECK(loss_metric(LossType::Mae) == "mae");
  CHECK(loss_metric(LossType::Huber) == "mse");
}

TEST_CASE("weights make the ensemble what repeating members would make it, for every rule") {
  // Two classes, three members on three samples; weights 2/3, 1/3, 0 against members 0, 0, 1.
  SwarmPredictions p;
  p.S = 3;
  p.N = 3;
  p.O = 2;
  p.outputs = {0.9f, 0.1f, 0.4f, 0.6f, 0.2f, 0.8f,   //
               0.3f, 0.7f, 0.6f, 0.4f, 0.45f, 0.55f,  //
               0.5f, 0.5f, 0.1f, 0.9f, 0.7f, 0.3f};
  p.logits = {2.0f, -2.0f, -0.4f, 0.4f, -1.4f, 1.4f,  //
              -0.8f, 0.8f, 0.4f, -0.4f, -0.1f, 0.1f,  //
              0.0f, 0.0f, -2.2f, 2.2f, 0.8f, -0.8f};
  const std::vector<double> w = {2.0 / 3, 1.0 / 3, 0.0};
  const SwarmPredictions repeated = member_subset(p, {0, 0, 1});
  for (Combine how : {Combine::MeanProb, Combine::Vote, Combine::MeanLogit}) {
    CAPTURE(to_string(how));
    const Combined a = combine(p, LossType::CrossEntropy, how, &w), b = combine(repeated, LossType::CrossEntropy, how);
    CHECK(a.used == std::vector<int>{0, 1});
    CHECK(a.label == b.label);
    for (std::size_t i = 0; i < a.prediction.size(); ++i) CHECK(a.prediction[i] == doctest::Approx(b.prediction[i]));
    for (int i = 0; i < p.N; ++i) {
      CHECK(a.entropy[i] == doctest::Approx(b.entropy[i]));
      CHECK(a.mutual_information[i] == doctest::Approx(b.mutual_information[i]));
      CHECK(a.disagreement[i] == doctest::Approx(b.disagreement[i]));
    }
  }
  const EnsembleStats a = ensemble_mean_std(p.outputs, 3, 3, 2, &w), b = ensemble_mean_std(repeated.outputs, 3, 3, 2);
  for (std::size_t i = 0; i < a.mean.size(); ++i) {
    CHECK(a.mean[i] == doctest::Approx(b.mean[i]));
    CHECK(a.std[i] == doctest::Approx(b.std[i]));
  }
}

TEST_CASE("--select forms: all, top:K, greedy, greedy:K, and anything else names them") {
  CHECK(parse_select("all").method == SelectMethod::All);
  CHECK(parse_select("top:5").method == SelectMethod::Top);
  CHECK(parse_select("top:5").k == 5);
  CHECK(parse_select("greedy").method == SelectMethod::Greedy);
  CHECK(parse_select("greedy").k == 0);
  CHECK(parse_select("greedy:30").k == 30);
  CHECK(select_text(parse_select("greedy")) == "greedy:20");
  for (const char* bad : {"top", "top:0", "top:-1", "top:x", "greedy:", "all:3", "best:2", "", "top:99999999999"})
    CHECK_THROWS_AS(parse_select(bad), std::invalid_argument);
  CHECK_THROWS_WITH(parse_select("top"), "'top' is not a selection; use all, top:K (the K best members), greedy or "
                                         "greedy:K (K rounds of greedy selection, default 20), e.g. top:5");
}

TEST_CASE("roc_auc and pr_auc are higher-is-better, so the best member by them is the highest") {
  CHECK(higher_is_better("roc_auc"));
  CHECK(higher_is_better("pr_auc"));
  CHECK(higher_is_better("f1_positive"));
  CHECK_FALSE(higher_is_better("log_loss"));
  CHECK(better_value("roc_auc", 0.9, 0.8));
  CHECK(better_value("log_loss", 0.2, 0.3));
  CHECK_FALSE(better_value("mse", std::nan(""), 1.0));
  CHECK(better_value("mse", 1.0, std::nan("")));
}
