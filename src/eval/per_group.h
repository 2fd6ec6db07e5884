// Evaluation of runs with one member per group (data.per_member group_by, e.g. one model per
// time series): each member is scored on its own group's samples only, the members' metrics
// are summarized by their distribution (quantiles), and, for sequence data, compared with
// naive forecasts (persistence, seasonal naive, drift) and reported in the target's original
// units.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "eval/metrics.h"
#include "math/losses.h"

namespace tn {

// What the members of a group_by run output on a split, each on its own samples only.
struct GroupPredictions {
  int S = 0, N = 0, O = 0;
  std::vector<int> member;     // [N] local member of each sample (= its group index)
  std::vector<float> outputs;  // [N, O] that member's output: probabilities or values
  std::vector<float> logits;   // [N, O] before softmax/sigmoid (may be empty)
  // [N, O] the outputs in the target's original units (sequence data whose model units differ
  // from them: normalized or transformed targets), else empty.
  std::vector<float> outputs_original;
};

// Quantile levels of the distribution across members: min, 5%, 25%, median, 75%, 95%, max.
inline constexpr std::array<double, 7> kQuantileLevels = {0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0};

// Quantiles of the finite values of `v` at kQuantileLevels, linearly interpolated between
// order statistics (NumPy's default "linear" method); all NaN when none is finite.
std::vector<double> quantiles(std::vector<double> v);

// One set of scores: every member on its own samples, and all samples pooled.
struct ScoreSet {
  std::vector<Metrics> members;                // [S] NaN for a member without samples or left out
  Metrics pooled;                              // every sample with its own member's prediction
  std::vector<std::vector<double>> quantiles;  // [metrics][kQuantileLevels] across members
  Metrics mean, std;                           // across members with finite values (population std)
  bool empty() const { return members.empty(); }
};

// One naive forecast's scores, in the model's units and in original units.
struct BaselineScores {
  std::string kind;  // persistence | seasonal_naive | drift
  ScoreSet scores, original;
};

struct GroupEvaluation {
  bool classification = false;
  std::vector<std::string> names;  // metric names (classification_ or regression_metric_names)
  std::vector<int> samples;        // [S] own samples of each member
  std::vector<int> excluded;       // local members with a non-finite prediction (left out)
  ScoreSet model;                  // the members, in the units the model was trained in
  ScoreSet original;               // the same in the target's original units (empty when they are the model's)
  std::vector<BaselineScores> baselines;  // naive forecasts scored on the same samples (sequence data)
};

// A naive forecast of every sample, [N, O] in the model's units and in original units (the
// latter empty when GroupTargets::y_original is).
struct BaselineForecast {
  std::string kind;
  std::vector<float> values, original;
};

// Targets of an own-sample evaluation; for regression on sequence data also the original units
// and the naive forecasts.
struct GroupTargets {
  std::vector<float> y;           // [N] labels (classification) or [N, O] values in the model's units
  std::vector<float> y_original;  // [N, O] in the target's original units; empty when they are y's
  std::vector<BaselineForecast> baselines;
};

// Scores p against t. Members with a non-finite output are left out (NaN metrics, and their
// samples are not pooled); so are, for a baseline, samples with a non-finite forecast.
GroupEvaluation evaluate_per_group(const GroupPredictions& p, LossType loss, const GroupTargets& t);

// How many members beat the baseline by `metric` (lower is better): among the members where
// both are finite, those with model < baseline, and the median of model / baseline (over the
// members whose baseline value is positive).
struct BaselineComparison {
  std::string metric;
  int beat = 0, compared = 0;
  double median_ratio = 0;
};
std::vector<BaselineComparison> compare_with_baseline(const std::vector<std::string>& names,
                                                      const std::vector<double>& members,
                                                      const std::vector<double>& baseline);
// A member's skill against a baseline by an error metric: 1 − model / baseline (> 0: better
// than the baseline, 1: perfect); NaN when either is not finite or the baseline is 0.
double skill_score(double model, double baseline);
// Metrics compared with the baseline (those where lower is better and a ratio means something).
const std::vector<std::string>& baseline_compared_metrics();  // {"mae", "rmse", "mse"}

}  // namespace tn
