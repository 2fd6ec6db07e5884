// Evaluation of runs with one member per group (data.per_member group_by, e.g. one model per
// time series): each member is scored on its own group's samples only, the members' metrics
// are summarized by their distribution (quantiles), and, for sequence data, compared with
// the naive last-value (persistence) forecast and reported in the target's original units.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "eval/metrics.h"
#include "math/losses.h"

namespace tn {

// What the members of a group_by run output on a split, each on its own samples only.
struct OwnPredictions {
  int S = 0, N = 0, O = 0;
  std::vector<int> member;     // [N] local member of each sample (= its group index)
  std::vector<float> outputs;  // [N, O] that member's output: probabilities or values
  std::vector<float> logits;   // [N, O] before softmax/sigmoid (may be empty)
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

struct OwnEvaluation {
  bool classification = false;
  std::vector<std::string> names;  // metric names (classification_ or regression_metric_names)
  std::vector<int> samples;        // [S] own samples of each member
  std::vector<int> excluded;       // local members with a non-finite prediction (left out)
  ScoreSet model;                  // the members, in the units the model was trained in
  ScoreSet baseline;               // persistence forecast (empty when there is none)
  // The same in the target's original units (empty when the target is not normalized).
  ScoreSet original, baseline_original;
};

// Units and baseline of an own-sample evaluation (regression on sequence data); all optional.
struct OwnTargets {
  std::vector<float> y;            // [N] labels (classification) or [N, O] values (normalized)
  std::vector<float> persistence;  // [N, O] the last-value forecast, in y's units; empty: none
  // Target normalization per group (sequence data): y = y'·target_std[g] + target_mean[g] with
  // g the sample's member; empty when the target was not normalized.
  std::vector<float> target_mean, target_std;
};

// Scores p against t. Members with a non-finite output are left out (NaN metrics, and their
// samples are not pooled); so are, for the baseline, samples with a non-finite forecast.
OwnEvaluation evaluate_own(const OwnPredictions& p, LossType loss, const OwnTargets& t);

// y' → original units: v[i]·std[g] + mean[g] for sample i of group member[i] (O values each).
std::vector<float> to_original_units(const std::vector<float>& v, const std::vector<int>& member, int O,
                                     const std::vector<float>& mean, const std::vector<float>& std);

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
// Metrics compared with the baseline (those where lower is better and a ratio means something).
const std::vector<std::string>& baseline_compared_metrics();  // {"mae", "rmse", "mse"}

}  // namespace tn
