// Per-member scores on their own group's samples, their distribution, the naive-forecast
// baselines and the original units.
#include "eval/per_group.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/combine.h"
#include "math/quantile.h"

namespace tn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Metrics of the rows `rows` of P [N, width] against the targets.
Metrics metrics_of_rows(const std::vector<float>& P, int width, const std::vector<float>& y, int T,
                        const std::vector<std::uint32_t>& rows, bool classification, LossType loss) {
  const int n = static_cast<int>(rows.size());
  if (!classification) {
    std::vector<float> a, b;
    a.reserve(rows.size() * width);
    b.reserve(rows.size() * T);
    for (std::uint32_t i : rows) {
      a.insert(a.end(), P.begin() + static_cast<std::ptrdiff_t>(i) * width, P.begin() + static_cast<std::ptrdiff_t>(i + 1) * width);
      b.insert(b.end(), y.begin() + static_cast<std::ptrdiff_t>(i) * T, y.begin() + static_cast<std::ptrdiff_t>(i + 1) * T);
    }
    return regression_metrics(a.data(), b.data(), n, width);
  }
  // Class probabilities [n, K] (bce: (1 − p, p)), predicted and true classes.
  const int K = loss == LossType::Bce ? 2 : width;
  std::vector<float> probs;
  std::vector<int> pred, labels;
  for (std::uint32_t i : rows) {
    if (loss == LossType::Bce) {
      probs.insert(probs.end(), {1.0f - P[i], P[i]});
    } else {
      probs.insert(probs.end(), P.begin() + static_cast<std::ptrdiff_t>(i) * width, P.begin() + static_cast<std::ptrdiff_t>(i + 1) * width);
    }
    pred.push_back(argmax(probs.data() + probs.size() - K, K));
    labels.push_back(static_cast<int>(y[i]));
  }
  if (n == 0) return classification_metrics(nullptr, nullptr, nullptr, 0, K);
  return classification_metrics(probs.data(), pred.data(), labels.data(), n, K);
}

bool finite_rows(const std::vector<float>& v, std::size_t i, int width) {
  for (int o = 0; o < width; ++o)
    if (!std::isfinite(v[i * width + o])) return false;
  return true;
}

// Scores P [N, width] per member and pooled; rows of `skip` members and non-finite rows are left out.
ScoreSet score(const std::vector<float>& P, int width, const std::vector<float>& y, int T,
               const std::vector<int>& member, int S, const std::vector<bool>& skip, bool classification,
               LossType loss, std::size_t M) {
  ScoreSet r;
  std::vector<std::vector<std::uint32_t>> rows(S);
  std::vector<std::uint32_t> all;
  for (std::size_t i = 0; i < member.size(); ++i) {
    const int m = member[i];
    if (m < 0 || m >= S || skip[m] || !finite_rows(P, i, width)) continue;
    rows[m].push_back(static_cast<std::uint32_t>(i));
    all.push_back(static_cast<std::uint32_t>(i));
  }
  r.members.resize(S);
  for (int s = 0; s < S; ++s) {
    if (skip[s] || rows[s].empty()) {
      r.members[s].values.assign(M, kNaN);
      continue;
    }
    r.members[s] = metrics_of_rows(P, width, y, T, rows[s], classification, loss);
  }
  r.pooled = all.empty() ? Metrics{std::vector<double>(M, kNaN), {}}
                         : metrics_of_rows(P, width, y, T, all, classification, loss);
  r.mean.values.assign(M, kNaN);
  r.std.values.assign(M, kNaN);
  for (std::size_t m = 0; m < M; ++m) {
    std::vector<double> v;
    for (const Metrics& x : r.members)
      if (std::isfinite(x.values[m])) v.push_back(x.values[m]);
    r.quantiles.push_back(quantiles(v));
    if (v.empty()) continue;
    double sum = 0, sq = 0;
    for (double x : v) sum += x;
    const double mu = sum / v.size();
    for (double x : v) sq += (x - mu) * (x - mu);
    r.mean.values[m] = mu;
    r.std.values[m] = std::sqrt(sq / v.size());
  }
  return r;
}

}  // namespace

std::vector<double> quantiles(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  std::vector<double> q(kQuantileLevels.size(), kNaN);
  if (v.empty()) return q;
  std::sort(v.begin(), v.end());
  for (std::size_t k = 0; k < kQuantileLevels.size(); ++k) q[k] = quantile_of_sorted(v, kQuantileLevels[k]);
  return q;
}

GroupEvaluation evaluate_per_group(const GroupPredictions& p, LossType loss, const GroupTargets& t) {
  GroupEvaluation e;
  e.classification = is_classification(loss);
  e.names = e.classification ? classification_metric_names(num_classes(loss, p.O)) : regression_metric_names();
  const std::size_t M = e.names.size();
  const int T = e.classification ? 1 : p.O;
  e.samples.assign(p.S, 0);
  std::vector<bool> skip(p.S, false);
  for (int i = 0; i < p.N; ++i) {
    const int m = p.member[i];
    if (m < 0 || m >= p.S) continue;
    ++e.samples[m];
    if (!finite_rows(p.outputs, i, p.O)) skip[m] = true;
  }
  for (int s = 0; s < p.S; ++s)
    if (skip[s]) e.excluded.push_back(s);
  e.model = score(p.outputs, p.O, t.y, T, p.member, p.S, skip, e.classification, loss, M);
  if (e.classification) return e;
  const bool original = !t.y_original.empty() && !p.outputs_original.empty();
  if (original) e.original = score(p.outputs_original, p.O, t.y_original, T, p.member, p.S, skip, false, loss, M);
  const std::vector<bool> none(p.S, false);
  for (const BaselineForecast& b : t.baselines) {
    BaselineScores r{b.kind, score(b.values, p.O, t.y, T, p.member, p.S, none, false, loss, M), {}};
    if (original && !b.original.empty())
      r.original = score(b.original, p.O, t.y_original, T, p.member, p.S, none, false, loss, M);
    e.baselines.push_back(std::move(r));
  }
  return e;
}

double skill_score(double model, double baseline) {
  if (!std::isfinite(model) || !std::isfinite(baseline) || baseline == 0) return kNaN;
  return 1.0 - model / baseline;
}

const std::vector<std::string>& baseline_compared_metrics() {
  static const std::vector<std::string> names = {"mae", "rmse", "mse"};
  return names;
}

std::vector<BaselineComparison> compare_with_baseline(const std::vector<std::string>& names,
                                                      const std::vector<double>& members,
                                                      const std::vector<double>& baseline) {
  std::vector<BaselineComparison> out;
  const std::size_t M = names.size();
  if (M == 0 || baseline.size() != members.size()) return out;
  const std::size_t S = members.size() / M;
  for (const std::string& name : baseline_compared_metrics()) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) continue;
    const auto m = static_cast<std::size_t>(it - names.begin());
    BaselineComparison c;
    c.metric = name;
    std::vector<double> ratios;
    for (std::size_t s = 0; s < S; ++s) {
      const double a = members[s * M + m], b = baseline[s * M + m];
      if (!std::isfinite(a) || !std::isfinite(b)) continue;
      ++c.compared;
      c.beat += a < b;
      if (b > 0) ratios.push_back(a / b);  // a perfect baseline has no ratio
    }
    c.median_ratio = quantiles(ratios)[3];
    out.push_back(c);
  }
  return out;
}

}  // namespace tn
