// The ensemble and every member of an ungrouped sequence run against the naive forecasts.
#include "run/naive_compare.h"

#include <algorithm>
#include <cmath>

#include "eval/metrics.h"
#include "eval/per_group.h"
#include "run/eval_record.h"

namespace tn {
namespace {

std::size_t metric_index(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

// Rows [n, O] of `v` where `keep` is true.
std::vector<float> rows(const std::vector<float>& v, const std::vector<bool>& keep, int O) {
  std::vector<float> out;
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) out.insert(out.end(), v.begin() + static_cast<std::ptrdiff_t>(i * O), v.begin() + static_cast<std::ptrdiff_t>((i + 1) * O));
  return out;
}

}  // namespace

NaiveComparison compare_with_naive(const SwarmPredictions& p, const Evaluation& e, const Inputs& in, LossType loss) {
  NaiveComparison c;
  if (e.classification || in.naive.persistence.empty() || in.n == 0 || p.N != in.n) return c;
  const GroupTargets t = group_targets(in.y, in.units, in.naive);
  if (t.baselines.empty()) return c;
  // The ensemble, one "member" per series.
  GroupPredictions own;
  own.N = p.N;
  own.O = p.O;
  own.member = in.group.empty() ? std::vector<int>(static_cast<std::size_t>(p.N), 0) : in.group;
  own.S = 1 + *std::max_element(own.member.begin(), own.member.end());
  own.outputs = e.combined.prediction;
  const bool original = !t.y_original.empty();
  if (original) own.outputs_original = in.units.original(own.outputs);
  c.ensemble = make_group_eval_record(evaluate_per_group(own, loss, t), in.split, in.source, 0, in.n);
  for (int g = 0; g < own.S; ++g)
    c.series.push_back(g < static_cast<int>(in.group_names.size()) ? in.group_names[g] : "series " + std::to_string(g));
  // Every member on the samples each naive forecast has, pooled over the series.
  const std::vector<float>& y = original ? t.y_original : t.y;
  const std::vector<std::string>& names = regression_metric_names();
  const auto N = static_cast<std::size_t>(p.N), O = static_cast<std::size_t>(p.O);
  std::vector<std::vector<float>> member(p.S);
  for (int s = 0; s < p.S; ++s) {
    member[s].assign(p.outputs.begin() + static_cast<std::ptrdiff_t>(s * N * O),
                     p.outputs.begin() + static_cast<std::ptrdiff_t>((s + 1) * N * O));
    if (original) member[s] = in.units.original(member[s]);
  }
  for (const BaselineForecast& b : t.baselines) {
    const std::vector<float>& f = original ? b.original : b.values;
    std::vector<bool> keep(N);
    for (std::size_t i = 0; i < N; ++i)
      keep[i] = std::all_of(f.begin() + static_cast<std::ptrdiff_t>(i * O), f.begin() + static_cast<std::ptrdiff_t>((i + 1) * O),
                            [](float x) { return std::isfinite(x); });
    const int n = static_cast<int>(std::count(keep.begin(), keep.end(), true));
    const std::vector<float> yk = rows(y, keep, p.O);
    const Metrics base = regression_metrics(rows(f, keep, p.O).data(), yk.data(), n, p.O);
    std::vector<Metrics> scores;
    for (int s = 0; s < p.S; ++s) scores.push_back(regression_metrics(rows(member[s], keep, p.O).data(), yk.data(), n, p.O));
    for (const char* metric : {"mae", "rmse"}) {
      const std::size_t m = metric_index(names, metric);
      MemberSkill k{b.kind, metric, base.values[m], 0, 0, {}};
      std::vector<double> skill;
      for (const Metrics& x : scores) {
        const double v = skill_score(x.values[m], k.baseline);
        if (!std::isfinite(v)) continue;
        ++k.compared;
        k.beat += v > 0 ? 1 : 0;
        skill.push_back(v);
      }
      k.quantiles = quantiles(skill);
      c.members.push_back(std::move(k));
    }
  }
  return c;
}

}  // namespace tn
