// Metrics of one predictor (a swarm member or the ensemble) against known targets. The
// conventions (zero division, clipping, ECE bins) are documented in docs/commands.md, "Metrics",
// and checked against scikit-learn in tests/test_metrics.cpp.
#pragma once
#include <string>
#include <vector>

namespace tn {

inline constexpr int kEceBins = 15;          // equal-width confidence bins of [0, 1]
inline constexpr double kLogLossEps = 1e-15;  // log loss uses max(p_true, eps)

// Metric names in report order; Metrics::values follow the same order. Two classes add the
// binary metrics of class 1 (the positive class): roc_auc, pr_auc (average precision) and
// f1_positive.
const std::vector<std::string>& classification_metric_names(int K);
const std::vector<std::string>& regression_metric_names();

struct Metrics {
  std::vector<double> values;     // one per metric name
  std::vector<double> confusion;  // [K, K] row = true class, column = predicted (classification)
};

// Index of the first largest of p[0..K) (NumPy's argmax).
int argmax(const float* p, int K);

// P [N, K] class probabilities, pred [N] the predicted classes, labels [N] the true
// classes (both in [0, K)). The probability of the predicted class, P[pred], is the
// confidence used for the expected calibration error. With K = 2 the values end with roc_auc
// and pr_auc of the scores P[:, 1] (scikit-learn's roc_auc_score, ties at half weight, and
// average_precision_score; NaN when the labels hold one class only) and f1_positive of pred.
Metrics classification_metrics(const float* P, const int* pred, const int* labels, int N, int K);

// Binary decisions: class 1 when P[i, 1] >= threshold. The threshold among the scores
// P[:, 1] that maximizes the F1 of class 1 on these labels (ties: the lowest such threshold;
// 0.5 when no label is 1). P is [N, 2].
double f1_threshold(const float* P, const int* labels, int N);

// Yhat and Y [N, O]: MSE, RMSE and MAE over all N·O values, R² averaged over outputs.
Metrics regression_metrics(const float* Yhat, const float* Y, int N, int O);

}  // namespace tn
