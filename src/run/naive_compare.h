// Sequence runs without group_by (one swarm, an ensemble, over one or several series): the
// ensemble's forecast and each member's against the naive forecasts (persistence, seasonal
// naive, drift) on the same samples, per series, as group_by runs are compared (eval/per_group.h).
#pragma once
#include <string>
#include <vector>

#include "eval/combine.h"
#include "eval/evaluate.h"
#include "io/run_file.h"
#include "math/losses.h"
#include "run/stored_inputs.h"

namespace tn {

// The members' skill against one naive forecast by one metric, every member on every sample
// the forecast has (all series pooled), in the units the series are compared in.
struct MemberSkill {
  std::string kind, metric;       // persistence | seasonal_naive | drift; mae | rmse
  double baseline = 0;            // the naive forecast's metric on those samples
  int beat = 0, compared = 0;     // members with a lower metric, of those with a finite one
  std::vector<double> quantiles;  // [7] of 1 − member/baseline across members (kQuantileLevels)
};

struct NaiveComparison {
  // The ensemble scored on each series' own samples in the form of a group_by record (combine
  // "own"): "member" k is series k (`series` names them), with every naive forecast scored on
  // the same samples, in model and original units.
  EvalRecord ensemble;
  std::vector<std::string> series;
  std::vector<MemberSkill> members;
  bool empty() const { return ensemble.baselines.empty(); }
};

// Empty unless `in` carries naive forecasts (sequence data) and the run is a regression.
// `p` [S, N, O] are the members' outputs in model units; `e` their evaluation (its combined
// prediction is the ensemble's, weighted as evaluated).
NaiveComparison compare_with_naive(const SwarmPredictions& p, const Evaluation& e, const Inputs& in, LossType loss);

}  // namespace tn
