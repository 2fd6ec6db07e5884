// Choosing the ensemble among a swarm's members on a selection split (the validation split,
// never the one reported): every member, the k best by a metric, or greedy forward selection
// with replacement (Caruana, Niculescu-Mizil, Crew and Ksikes, "Ensemble selection from
// libraries of models", ICML 2004). Conventions: docs/commands.md, "Ensemble selection".
#pragma once
#include <string>
#include <vector>

#include "eval/evaluate.h"

namespace tn {

enum class SelectMethod { All, Top, Greedy };

const char* to_string(SelectMethod m);  // "all", "top", "greedy"

inline constexpr int kGreedyRounds = 20;  // greedy's rounds when none are given

struct SelectSpec {
  SelectMethod method = SelectMethod::All;
  int k = 0;           // top: the members kept; greedy: the rounds (0: kGreedyRounds)
  std::string metric;  // a metric name of the run's task; "": the loss's (loss_metric)
};

// "all", "top:K", "greedy" or "greedy:K" (K a whole number ≥ 1). Throws std::invalid_argument
// naming the forms.
SelectSpec parse_select(const std::string& text);
// The spec as parse_select reads it: "all", "top:5", "greedy:20".
std::string select_text(const SelectSpec& spec);

// The metric that measures the training loss: log_loss (cross_entropy, bce), mae (mae), mse
// (mse and huber, which has no metric of its own).
std::string loss_metric(LossType loss);

// The index of `metric` among `names`; throws std::invalid_argument listing them.
std::size_t metric_position(const std::vector<std::string>& names, const std::string& metric);

// Whether value a of `metric` is better than b (higher or lower, by by_hparam.h's
// higher_is_better); NaN is never better.
bool better_value(const std::string& metric, double a, double b);

// A chosen ensemble: its members (local indices) and how many times each was chosen; its
// weights are those counts over their sum.
struct Selection {
  SelectMethod method = SelectMethod::All;
  int k = 0;                   // as asked: top's members, greedy's rounds
  std::string metric;          // what members were chosen by
  std::vector<int> members;    // distinct; top: best first; greedy: in the order first added
  std::vector<int> counts;     // [members] times chosen (1 unless greedy repeated it)
  double value = 0;            // the chosen ensemble's metric on the selection split
  // greedy: the ensemble's metric after each round (all `k` of them; the best prefix is kept)
  std::vector<double> rounds;
  // [S] each member's weight: counts / Σ counts, 0 for members not chosen.
  std::vector<double> weights(int S) const;
};

// On the selection split's predictions `p` (targets as evaluate() takes them) and their
// evaluation `e` (evaluate(p, ...)):
//   all:    every finite member;
//   top:    the k finite members with the best value of the metric (ties: member order; k is
//           capped at the finite members);
//   greedy: starting from no member, `k` rounds each add the member (repeats allowed) whose
//           addition gives the ensemble (combine() with the counts as weights) the best value
//           (ties: the lowest member index); the shortest prefix of rounds with the best value
//           is kept.
// Throws std::invalid_argument for a metric the task does not have.
Selection select_members(const SwarmPredictions& p, const Evaluation& e, LossType loss,
                         const std::vector<float>& targets, Combine how, const SelectSpec& spec);

}  // namespace tn
