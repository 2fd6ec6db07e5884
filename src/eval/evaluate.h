// Metrics of every swarm member, their mean and spread, and the ensemble's, on one set of
// samples with known targets.
#pragma once
#include <string>
#include <vector>

#include "eval/combine.h"
#include "eval/metrics.h"

namespace tn {

struct Evaluation {
  bool classification = false;
  std::vector<std::string> names;  // metric names (classification_ or regression_metric_names)
  Combined combined;               // the ensemble's predictions and per-sample uncertainty
  std::vector<int> finite, excluded;  // members with all-finite predictions (scored), the rest
  std::vector<Metrics> members;    // [S]; NaN values and no confusion for excluded members
  Metrics member_mean;             // over `finite`; confusion = mean confusion matrix
  Metrics member_std;              // population standard deviation (ddof 0); no confusion
  Metrics ensemble;                // of combined.prediction (classes: combined.label)
  // With ensemble weights (a selection, eval/select.h): the ensemble of every finite member,
  // to compare with; else empty.
  Metrics all_members;
};

// Decision thresholds of a two-class run: class 1 when the probability of class 1 is at
// least the threshold, instead of the more probable class. One per member of the
// predictions (NaN: the more probable class) and one for the ensemble.
struct Thresholds {
  std::vector<double> members;  // [S]
  double ensemble = 0.5;
};

// targets: [N] class labels (classification) or [N, O] values (regression). With
// `thresholds` (two classes only; not with Combine::Vote) the members' and the ensemble's
// classes are decided by them. With `weights` [S] the ensemble is the weighted one of
// combine() (members of weight 0 left out); every finite member is still scored.
Evaluation evaluate(const SwarmPredictions& p, LossType loss, const std::vector<float>& targets,
                    Combine how, const Thresholds* thresholds = nullptr,
                    const std::vector<double>* weights = nullptr);

// The metrics of the ensemble alone (combine() with `weights`, null: every member), decided
// by `threshold` (two classes; NaN: the more probable class): what ensemble selection
// compares. NaN values when no member is used.
Metrics ensemble_metrics(const SwarmPredictions& p, LossType loss, const std::vector<float>& targets, Combine how,
                         const std::vector<double>* weights, double threshold);

// The evaluation of members `members` (indices into p's) alone: their ensemble, mean and spread.
Evaluation evaluate_members(const SwarmPredictions& p, const std::vector<int>& members, LossType loss,
                            const std::vector<float>& targets, Combine how);

// Every used member's and the ensemble's threshold that maximizes the F1 of class 1 on these
// predictions and labels (eval/metrics.h f1_threshold); two classes only. The ensemble is
// combine()'s with `weights` (null: every member).
Thresholds f1_thresholds(const SwarmPredictions& p, LossType loss, const std::vector<float>& labels, Combine how,
                         const std::vector<double>* weights = nullptr);

// One threshold for every member and the ensemble.
Thresholds same_threshold(int S, double threshold);

// The finite members, best first: highest accuracy, then lowest log loss (classification);
// lowest MSE (regression). Ties keep member order.
std::vector<int> rank_members(const Evaluation& e);

}  // namespace tn
