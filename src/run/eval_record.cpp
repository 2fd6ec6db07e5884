// Building the run file's prediction and evaluation records.
#include "run/eval_record.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/ensemble.h"

namespace tn {
namespace {

using Shape = std::vector<std::uint64_t>;

Array array(Shape shape, std::vector<float> data) { return Array{std::move(shape), std::move(data)}; }

Array confusion(const std::vector<double>& c, int K) {
  if (c.empty()) return {};
  return array({static_cast<std::uint64_t>(K), static_cast<std::uint64_t>(K)}, std::vector<float>(c.begin(), c.end()));
}

Array per_sample(const std::vector<float>& v) {
  return v.empty() ? Array{} : array({v.size()}, v);
}

}  // namespace

Predictions make_predictions(const std::string& split, const SwarmPredictions& p,
                             const std::vector<float>& targets, bool classification,
                             const std::vector<double>* weights) {
  const auto S = static_cast<std::uint64_t>(p.S), N = static_cast<std::uint64_t>(p.N),
             O = static_cast<std::uint64_t>(p.O);
  const EnsembleStats ens = ensemble_mean_std(p.outputs, p.S, p.N, p.O, weights);
  Predictions r;
  r.split = split;
  r.members = array({S, N, O}, p.outputs);
  r.ensemble_mean = array({N, O}, ens.mean);
  r.ensemble_std = array({N, O}, ens.std);
  if (!targets.empty())
    r.targets = classification ? array({N}, targets) : array({N, targets.size() / std::max<std::uint64_t>(N, 1)}, targets);
  return r;
}

bool keep_predictions(const std::string& kept, Predictions& p) {
  if (kept == "ensemble") p.members = {};
  return kept != "none";
}

EvalRecord make_eval_record(const Evaluation& e, const std::string& split,
                            const std::string& source, Combine how, int first_member, int n) {
  EvalRecord r;
  r.split = split;
  r.source = source;
  r.task = e.classification ? "classification" : "regression";
  r.combine = e.classification ? to_string(how) : "mean";
  r.n_samples = n;
  r.metrics = e.names;
  const int S = static_cast<int>(e.members.size()), K = e.combined.K;
  const std::size_t KK = static_cast<std::size_t>(K) * K;
  std::vector<float> member_confusion;
  for (int s = 0; s < S; ++s) {
    r.member.push_back(first_member + s);
    r.members.insert(r.members.end(), e.members[s].values.begin(), e.members[s].values.end());
    const std::vector<double>& c = e.members[s].confusion;
    if (c.empty()) member_confusion.insert(member_confusion.end(), KK, std::numeric_limits<float>::quiet_NaN());
    else member_confusion.insert(member_confusion.end(), c.begin(), c.end());
  }
  r.member_mean = e.member_mean.values;
  r.member_std = e.member_std.values;
  r.ensemble = e.ensemble.values;
  for (int s : e.excluded) r.excluded.push_back(first_member + s);
  if (e.classification) {
    const auto k = static_cast<std::uint64_t>(K);
    r.member_confusion = array({static_cast<std::uint64_t>(S), k, k}, std::move(member_confusion));
    r.member_mean_confusion = confusion(e.member_mean.confusion, K);
    r.ensemble_confusion = confusion(e.ensemble.confusion, K);
  }
  const std::uint64_t N = static_cast<std::uint64_t>(n);
  r.ensemble_prediction = array({N, static_cast<std::uint64_t>(e.combined.width)}, e.combined.prediction);
  r.entropy = per_sample(e.combined.entropy);
  r.mutual_information = per_sample(e.combined.mutual_information);
  r.disagreement = per_sample(e.combined.disagreement);
  return r;
}

namespace {

std::vector<double> flat_members(const std::vector<Metrics>& members) {
  std::vector<double> v;
  for (const Metrics& m : members) v.insert(v.end(), m.values.begin(), m.values.end());
  return v;
}

std::vector<double> flat_quantiles(const std::vector<std::vector<double>>& q) {
  std::vector<double> v;
  for (const std::vector<double>& row : q) v.insert(v.end(), row.begin(), row.end());
  return v;
}

ScoreRecord score_record(const ScoreSet& s) {
  if (s.empty()) return {};
  return {flat_members(s.members), s.pooled.values, flat_quantiles(s.quantiles)};
}

}  // namespace

GroupTargets group_targets(const std::vector<float>& y, const TargetUnits& units, const NaiveForecasts& naive) {
  GroupTargets t{y, {}, {}};
  const bool original = !units.identity();
  if (original) t.y_original = units.original(y);
  const std::vector<std::string>& kinds = naive_forecast_kinds();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const std::vector<float>& v = naive.of(k);
    if (v.empty() || std::none_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); })) continue;
    t.baselines.push_back({kinds[k], original ? units.model_units(v) : v, original ? v : std::vector<float>{}});
  }
  return t;
}

Predictions make_group_predictions(const std::string& split, const GroupPredictions& p, const GroupTargets& t,
                                 int first_member, bool classification) {
  const auto N = static_cast<std::uint64_t>(p.N), O = static_cast<std::uint64_t>(p.O);
  Predictions r;
  r.split = split;
  for (int m : p.member) r.member.push_back(first_member + m);
  r.per_group = array({N, O}, p.outputs);
  if (!t.y.empty()) r.targets = classification ? array({N}, t.y) : array({N, O}, t.y);
  const auto shaped = [&](const std::vector<float>& v) { return v.empty() ? Array{} : array({N, O}, v); };
  for (const BaselineForecast& b : t.baselines) r.naive.push_back({b.kind, shaped(b.values), shaped(b.original)});
  if (classification || t.y_original.empty()) return r;
  r.per_group_original = shaped(p.outputs_original);
  r.targets_original = shaped(t.y_original);
  return r;
}

EvalRecord make_group_eval_record(const GroupEvaluation& e, const std::string& split, const std::string& source,
                                int first_member, int n) {
  EvalRecord r;
  r.split = split;
  r.source = source;
  r.task = e.classification ? "classification" : "regression";
  r.combine = "own";
  r.n_samples = n;
  r.metrics = e.names;
  for (std::size_t s = 0; s < e.model.members.size(); ++s) r.member.push_back(first_member + static_cast<int>(s));
  r.members = flat_members(e.model.members);
  r.member_mean = e.model.mean.values;
  r.member_std = e.model.std.values;
  for (int s : e.excluded) r.excluded.push_back(first_member + s);
  r.member_samples = e.samples;
  r.pooled = e.model.pooled.values;
  r.quantiles = flat_quantiles(e.model.quantiles);
  r.original = score_record(e.original);
  for (const BaselineScores& b : e.baselines) r.baselines.push_back({b.kind, score_record(b.scores), score_record(b.original)});
  return r;
}

}  // namespace tn
