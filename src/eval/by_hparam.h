// Per-member hyperparameters against member metrics: which member is best for each metric
// (with its hyperparameter values), and members grouped by each hyperparameter's value.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "eval/evaluate.h"

namespace tn {

// Whether a larger value of metric `name` is better (accuracy, precision, recall, f1, r2,
// roc_auc, pr_auc).
bool higher_is_better(const std::string& name);

struct HparamGroup {
  double value = 0;
  std::string text;                // a text-valued key's value ("relu", "[64, 64]"), else ""
  int members = 0;                 // members with this value and finite metrics
  std::vector<double> mean, std;   // per metric, over those members (population std)
  std::vector<int> member_list;    // local indices of every member with this value
  std::vector<double> ensemble;    // per metric: the ensemble of member_list alone (evaluate_members), or empty
};

struct HparamReport {
  std::vector<std::string> keys;                   // e.g. "optimizer.lr"
  std::vector<std::vector<double>> values;         // [key][S] each member's value (text keys: empty)
  std::vector<std::vector<std::string>> texts;     // [key][S] a text key's values, else empty
  std::vector<int> best;                           // per metric: local member index, -1 if none (chosen on rank_on)
  std::vector<std::vector<HparamGroup>> by_value;  // [key] groups in increasing value (text: first seen first)
  // Member k's value of key `k` as text ("0.01", "relu").
  std::string value_text(std::size_t key, std::size_t member) const;
};

// hparams: (key, [S] values) as stored in /members/hparams. Members whose metrics are not
// finite (excluded, diverged) are left out of the best and of the group statistics.
// `text`: text-valued keys (per-member architectures: model.hidden, activations, and the
// whole "architecture"), grouped by value in the order members first have them.
// The best member per metric is chosen on `rank_on` (the same members on the selection
// split, run/select_run.h) when given, else on `e`.
HparamReport hparam_report(const Evaluation& e,
                           const std::vector<std::pair<std::string, std::vector<double>>>& hparams,
                           const std::vector<std::pair<std::string, std::vector<std::string>>>& text = {},
                           const Evaluation* rank_on = nullptr);

}  // namespace tn
