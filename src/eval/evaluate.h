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
  std::vector<Metrics> members;    // [S]; NaN values and no confusion for excluded members
  Metrics member_mean;             // over combined.used; confusion = mean confusion matrix
  Metrics member_std;              // population standard deviation (ddof 0); no confusion
  Metrics ensemble;                // of combined.prediction (classes: combined.label)
};

// targets: [N] class labels (classification) or [N, O] values (regression).
Evaluation evaluate(const SwarmPredictions& p, LossType loss, const std::vector<float>& targets,
                    Combine how);

// The evaluation of members `members` (indices into p's) alone: their ensemble, mean and spread.
Evaluation evaluate_members(const SwarmPredictions& p, const std::vector<int>& members, LossType loss,
                            const std::vector<float>& targets, Combine how);

// The used members, best first: highest accuracy, then lowest log loss (classification);
// lowest MSE (regression). Ties keep member order.
std::vector<int> rank_members(const Evaluation& e);

}  // namespace tn
