// Per-member, member-mean and ensemble metrics.
#include "eval/evaluate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The classes P [N, width] decides: the more probable, or class 1 from `threshold` on (two
// classes, a threshold that is not NaN).
std::vector<int> decide(const float* P, int N, int width, double threshold) {
  std::vector<int> pred(N);
  const bool thresholded = width == 2 && !std::isnan(threshold);
  for (int i = 0; i < N; ++i) {
    const float* p = P + static_cast<std::size_t>(i) * width;
    pred[i] = thresholded ? (p[1] >= threshold ? 1 : 0) : argmax(p, width);
  }
  return pred;
}

Metrics metrics_of(const float* P, const std::vector<int>* pred, const std::vector<int>& labels,
                   const std::vector<float>& targets, int N, int width, bool classification,
                   double threshold = kNaN) {
  if (!classification) return regression_metrics(P, targets.data(), N, width);
  std::vector<int> own;
  if (!pred) {
    own = decide(P, N, width, threshold);
    pred = &own;
  }
  return classification_metrics(P, pred->data(), labels.data(), N, width);
}

// Mean and population standard deviation of the used members' values (and mean confusion).
void summarize(const Evaluation& e, const std::vector<int>& used, Metrics& mean, Metrics& sd) {
  const std::size_t M = e.names.size();
  mean.values.assign(M, kNaN);
  sd.values.assign(M, kNaN);
  if (used.empty()) return;
  for (std::size_t m = 0; m < M; ++m) {
    double sum = 0, sq = 0;
    for (int s : used) sum += e.members[s].values[m];
    const double mu = sum / used.size();
    for (int s : used) sq += (e.members[s].values[m] - mu) * (e.members[s].values[m] - mu);
    mean.values[m] = mu;
    sd.values[m] = std::sqrt(sq / used.size());
  }
  if (!e.classification) return;
  mean.confusion.assign(e.members[used.front()].confusion.size(), 0.0);
  for (int s : used)
    for (std::size_t i = 0; i < mean.confusion.size(); ++i)
      mean.confusion[i] += e.members[s].confusion[i] / used.size();
}

// The ensemble's metrics of combined predictions `c` (classes: c.label).
Metrics ensemble_of(const Combined& c, const std::vector<int>& labels, const std::vector<float>& targets, int N,
                    bool classification, std::size_t metrics) {
  if (c.used.empty()) return {std::vector<double>(metrics, kNaN), {}};
  return metrics_of(c.prediction.data(), &c.label, labels, targets, N, c.width, classification);
}

std::vector<int> labels_of(const std::vector<float>& targets, bool classification) {
  std::vector<int> labels;
  if (classification)
    for (float y : targets) labels.push_back(static_cast<int>(y));
  return labels;
}

}  // namespace

Evaluation evaluate(const SwarmPredictions& p, LossType loss, const std::vector<float>& targets,
                    Combine how, const Thresholds* thresholds, const std::vector<double>* weights) {
  Evaluation e;
  e.classification = is_classification(loss);
  e.combined = combine(p, loss, how);
  e.finite = e.combined.used;
  e.excluded = e.combined.excluded;
  e.names = e.classification ? classification_metric_names(e.combined.K) : regression_metric_names();
  const int N = p.N, width = e.combined.width;
  const std::vector<int> labels = labels_of(targets, e.classification);
  if (weights) {
    e.all_members = ensemble_of(e.combined, labels, targets, N, e.classification, e.names.size());
    e.combined = combine(p, loss, how, weights);
  }
  if (thresholds && e.combined.K == 2 && how != Combine::Vote)
    e.combined.label = decide(e.combined.prediction.data(), p.N, 2, thresholds->ensemble);
  e.members.resize(p.S);
  for (Metrics& m : e.members) m.values.assign(e.names.size(), kNaN);
  for (int s : e.finite) {
    const std::vector<float> P = e.classification
        ? class_probabilities(p, loss, s)
        : std::vector<float>(p.outputs.begin() + static_cast<std::ptrdiff_t>(s) * N * width,
                             p.outputs.begin() + static_cast<std::ptrdiff_t>(s + 1) * N * width);
    const double threshold = thresholds && static_cast<std::size_t>(s) < thresholds->members.size() ? thresholds->members[s] : kNaN;
    e.members[s] = metrics_of(P.data(), nullptr, labels, targets, N, width, e.classification, threshold);
  }
  summarize(e, e.finite, e.member_mean, e.member_std);
  e.ensemble = ensemble_of(e.combined, labels, targets, N, e.classification, e.names.size());
  return e;
}

Metrics ensemble_metrics(const SwarmPredictions& p, LossType loss, const std::vector<float>& targets, Combine how,
                         const std::vector<double>* weights, double threshold) {
  Combined c = combine(p, loss, how, weights);
  const bool classification = is_classification(loss);
  if (c.K == 2 && how != Combine::Vote && !std::isnan(threshold)) c.label = decide(c.prediction.data(), p.N, 2, threshold);
  const std::size_t M = classification ? classification_metric_names(c.K).size() : regression_metric_names().size();
  return ensemble_of(c, labels_of(targets, classification), targets, p.N, classification, M);
}

Evaluation evaluate_members(const SwarmPredictions& p, const std::vector<int>& members, LossType loss,
                            const std::vector<float>& targets, Combine how) {
  return evaluate(member_subset(p, members), loss, targets, how);
}

Thresholds f1_thresholds(const SwarmPredictions& p, LossType loss, const std::vector<float>& labels, Combine how,
                         const std::vector<double>* weights) {
  const Combined c = combine(p, loss, how);
  Thresholds t;
  t.members.assign(p.S, kNaN);
  if (c.K != 2) return t;
  const std::vector<int> y = labels_of(labels, true);
  for (int s : c.used) t.members[s] = f1_threshold(class_probabilities(p, loss, s).data(), y.data(), p.N);
  const Combined ens = weights ? combine(p, loss, how, weights) : c;
  t.ensemble = ens.used.empty() ? 0.5 : f1_threshold(ens.prediction.data(), y.data(), p.N);
  return t;
}

Thresholds same_threshold(int S, double threshold) {
  Thresholds t;
  t.members.assign(S, threshold);
  t.ensemble = threshold;
  return t;
}

std::vector<int> rank_members(const Evaluation& e) {
  std::vector<int> order = e.finite;
  const auto at = [&](const char* name) {
    return static_cast<std::size_t>(std::find(e.names.begin(), e.names.end(), name) - e.names.begin());
  };
  const std::size_t first = at(e.classification ? "accuracy" : "mse"), loss = at("log_loss");
  const auto better = [&](int a, int b) {
    const std::vector<double>&va = e.members[a].values, &vb = e.members[b].values;
    if (!e.classification) return va[first] < vb[first];
    if (va[first] != vb[first]) return va[first] > vb[first];
    return va[loss] < vb[loss];
  };
  std::stable_sort(order.begin(), order.end(), better);
  return order;
}

}  // namespace tn
