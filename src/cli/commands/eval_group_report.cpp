// Reports of group_by evaluations: quantiles across members, naive baselines, per-series skill.
#include "cli/commands/eval_group_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/commands/report_parts.h"
#include "eval/by_hparam.h"
#include "eval/per_group.h"

namespace tn {

using namespace report;  // json, number, num, metric_object, member_list, record_header

namespace {

// Values of metric m of every member: {"member": k, [<"group">,] <metric>: v, ...} rows.
json member_rows(const EvalRecord& r, const std::vector<double>& values, const std::vector<std::string>& groups,
                 bool details) {
  const std::size_t M = r.metrics.size();
  json rows = json::array();
  for (std::size_t s = 0; s < r.member.size(); ++s) {
    json m = {{"member", r.member[s]}};
    if (s < groups.size()) m["group"] = groups[s];
    if (details) {
      m["excluded"] = std::find(r.excluded.begin(), r.excluded.end(), r.member[s]) != r.excluded.end();
      m["n_samples"] = s < r.member_samples.size() ? r.member_samples[s] : 0;
    }
    for (std::size_t k = 0; k < M; ++k) m[r.metrics[k]] = number(values[s * M + k]);
    rows.push_back(m);
  }
  return rows;
}

json quantile_object(const EvalRecord& r, const std::vector<double>& q) {
  json o = json::object();
  for (std::size_t m = 0; m < r.metrics.size(); ++m) {
    json row = json::array();
    for (std::size_t k = 0; k < kQuantileLevels.size(); ++k) row.push_back(number(q[m * kQuantileLevels.size() + k]));
    o[r.metrics[m]] = row;
  }
  return o;
}

json scores_json(const EvalRecord& r, const ScoreRecord& s, const std::vector<std::string>& groups) {
  if (s.empty()) return nullptr;
  return {{"members", member_rows(r, s.members, groups, false)},
          {"pooled", metric_object(r, s.pooled.data(), nullptr, 0)},
          {"quantiles", quantile_object(r, s.quantiles)}};
}

const char* level_name(std::size_t k) {
  static const char* const names[] = {"min", "5%", "25%", "median", "75%", "95%", "max"};
  return names[k];
}

// Rows "  <metric>  q0 .. q6  pooled" of one score set.
std::string quantile_rows(const EvalRecord& r, const std::vector<double>& q, const std::vector<double>& pooled,
                          const std::string& indent) {
  std::string t;
  const std::size_t L = kQuantileLevels.size();
  for (std::size_t m = 0; m < r.metrics.size(); ++m) {
    t += fmt::format("{:<18}", indent + r.metrics[m]);
    for (std::size_t k = 0; k < L; ++k) t += fmt::format("{:>11}", num(q[m * L + k]));
    t += fmt::format("{:>11}\n", num(pooled[m]));
  }
  return t;
}

std::string units_block(const EvalRecord& r, const std::string& title, const std::vector<double>& q,
                        const std::vector<double>& pooled, bool original) {
  std::string t = fmt::format("{:<18}", title);
  for (std::size_t k = 0; k < kQuantileLevels.size(); ++k) t += fmt::format("{:>11}", level_name(k));
  t += fmt::format("{:>11}\n", "pooled");
  t += quantile_rows(r, q, pooled, "  ");
  for (const EvalRecord::Baseline& b : r.baselines) {
    const ScoreRecord& s = original ? b.original : b.scores;
    if (!s.empty()) t += "  " + b.kind + "\n" + quantile_rows(r, s.quantiles, s.pooled, "    ");
  }
  return t;
}

// What series are compared in: original units when the record has them, else the model's.
bool compared_in_original(const EvalRecord& r) { return !r.original.empty(); }
const std::vector<double>& compared_members(const EvalRecord& r) {
  return compared_in_original(r) ? r.original.members : r.members;
}
const std::vector<double>& compared_members(const EvalRecord& r, const EvalRecord::Baseline& b) {
  return compared_in_original(r) && !b.original.empty() ? b.original.members : b.scores.members;
}

// "3 of 4 series beat persistence by mae (median ratio model/persistence 0.91), 3 of 4 by rmse (0.93)"
std::string beat_line(const EvalRecord& r, const EvalRecord::Baseline& b) {
  const std::vector<BaselineComparison> c = compare_with_baseline(r.metrics, compared_members(r), compared_members(r, b));
  std::string t;
  for (const BaselineComparison& x : c) {
    if (x.metric == "mse") continue;  // the same ranking as rmse
    if (t.empty())
      t = fmt::format("{} of {} series beat {} by {} (median ratio model/{} {})", x.beat, x.compared, b.kind, x.metric,
                      b.kind, num(x.median_ratio));
    else
      t += fmt::format(", {} of {} by {} ({})", x.beat, x.compared, x.metric, num(x.median_ratio));
  }
  return t;
}

std::size_t metric_index(const EvalRecord& r, const std::string& name) {
  const auto it = std::find(r.metrics.begin(), r.metrics.end(), name);
  return it == r.metrics.end() ? 0 : static_cast<std::size_t>(it - r.metrics.begin());
}

// Each series (member) against each baseline: {"member" (unless !member_column), "group", "n_samples", "units",
// <metric>: v, "baselines": {<kind>: {<metric>: v, "skill_<metric>": s, "beats_by_<metric>": b}}}.
json series_json(const EvalRecord& r, const std::vector<std::string>& groups, bool member_column = true) {
  const std::size_t M = r.metrics.size();
  const std::vector<double>& model = compared_members(r);
  json rows = json::array();
  for (std::size_t s = 0; s < r.member.size(); ++s) {
    json row = member_column ? json{{"member", r.member[s]}} : json::object();
    if (s < groups.size()) row["group"] = groups[s];
    row["n_samples"] = s < r.member_samples.size() ? r.member_samples[s] : 0;
    row["units"] = compared_in_original(r) ? "original" : "model";
    json against = json::object();
    for (const std::string& name : baseline_compared_metrics()) {
      const std::size_t m = metric_index(r, name);
      if (r.metrics[m] == name) row[name] = number(model[s * M + m]);
    }
    for (const EvalRecord::Baseline& b : r.baselines) {
      const std::vector<double>& base = compared_members(r, b);
      json o = json::object();
      for (const std::string& name : baseline_compared_metrics()) {
        const std::size_t m = metric_index(r, name);
        if (r.metrics[m] != name) continue;
        const double a = model[s * M + m], c = base[s * M + m];
        o[name] = number(c);
        o["skill_" + name] = number(skill_score(a, c));
        o["beats_by_" + name] = std::isfinite(a) && std::isfinite(c) ? json(a < c) : json(nullptr);
      }
      against[b.kind] = o;
    }
    row["baselines"] = against;
    rows.push_back(row);
  }
  return rows;
}

// The per-series table by mae: the model, each baseline and the model's skill against it; all
// series up to 30, else the 10 with the lowest and the 10 with the highest skill against the
// first baseline.
std::string series_table(const EvalRecord& r, const std::vector<std::string>& groups, bool member_column = true) {
  const std::size_t M = r.metrics.size(), m = metric_index(r, "mae"), S = r.member.size();
  if (r.baselines.empty() || r.metrics[m] != "mae" || S == 0) return "";
  const std::vector<double>& model = compared_members(r);
  std::size_t width = 6;
  for (const std::string& g : groups) width = std::max(width, g.size());
  std::string t = fmt::format("\nper series: {} in {} units; skill = 1 − model/baseline (> 0: the model is better)\n",
                              r.metrics[m], compared_in_original(r) ? "original" : "model");
  t += fmt::format("{:<{}}{:>8}{:>12}", "series", width, member_column ? "member" : "", member_column ? "model" : "ensemble");
  for (const EvalRecord::Baseline& b : r.baselines) t += fmt::format("{:>16}{:>9}", b.kind, "skill");
  t += "\n";
  std::vector<std::size_t> order(S);
  for (std::size_t s = 0; s < S; ++s) order[s] = s;
  const std::vector<double>& first = compared_members(r, r.baselines.front());
  const auto skill = [&](std::size_t s) {
    const double v = skill_score(model[s * M + m], first[s * M + m]);
    return std::isfinite(v) ? v : -INFINITY;
  };
  const bool all = S <= 30;
  if (!all) std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return skill(a) < skill(b); });
  for (std::size_t i = 0; i < S; ++i) {
    if (!all && i == 10) {
      t += fmt::format("  ... {} series between (the 10 with the lowest and the 10 with the highest skill against {} "
                       "are shown; --json lists every one)\n", S - 20, r.baselines.front().kind);
      i = S - 10;
    }
    const std::size_t s = order[i];
    t += fmt::format("{:<{}}{:>8}{:>12}", s < groups.size() ? groups[s] : std::to_string(r.member[s]), width,
                     member_column ? fmt::format("#{}", r.member[s]) : "", num(model[s * M + m]));
    for (const EvalRecord::Baseline& b : r.baselines) {
      const double c = compared_members(r, b)[s * M + m], k = skill_score(model[s * M + m], c);
      t += fmt::format("{:>16}{:>9}", num(c), std::isfinite(k) ? fmt::format("{:+.3f}", k) : "nan");
    }
    t += "\n";
  }
  return t;
}

}  // namespace

std::string group_eval_json(const EvalRecord& r, const std::string& run_path,
                          const std::vector<std::string>& class_names, const std::vector<std::string>& groups) {
  json j = record_header(r, run_path, class_names);
  j["members"] = member_rows(r, r.members, groups, true);
  j["member_mean"] = metric_object(r, r.member_mean.data(), nullptr, 0);
  j["member_std"] = metric_object(r, r.member_std.data(), nullptr, 0);
  j["pooled"] = metric_object(r, r.pooled.data(), nullptr, 0);
  j["quantile_levels"] = std::vector<double>(kQuantileLevels.begin(), kQuantileLevels.end());
  j["quantiles"] = quantile_object(r, r.quantiles);
  // "baseline", "original_units.baseline" and "vs_baseline": persistence, as before seasonal naive
  // and drift; "baselines", "vs_baselines" and "series": every naive forecast.
  const auto persistence = std::find_if(r.baselines.begin(), r.baselines.end(),
                                        [](const EvalRecord::Baseline& b) { return b.kind == "persistence"; });
  const bool has_persistence = persistence != r.baselines.end();
  j["baseline"] = has_persistence ? scores_json(r, persistence->scores, groups) : json(nullptr);
  if (has_persistence) j["baseline"]["kind"] = persistence->kind;
  j["original_units"] = scores_json(r, r.original, groups);
  if (!r.original.empty())
    j["original_units"]["baseline"] = has_persistence ? scores_json(r, persistence->original, groups) : json(nullptr);
  json baselines = json::array(), vs_all = json::object();
  for (const EvalRecord::Baseline& b : r.baselines) {
    json o = scores_json(r, b.scores, groups);
    o["kind"] = b.kind;
    o["original_units"] = scores_json(r, b.original, groups);
    baselines.push_back(o);
    json vs = json::object();
    for (const BaselineComparison& c : compare_with_baseline(r.metrics, compared_members(r), compared_members(r, b)))
      vs[c.metric] = {{"beat", c.beat}, {"compared", c.compared}, {"median_ratio", number(c.median_ratio)}};
    vs_all[b.kind] = vs;
  }
  j["vs_baseline"] = has_persistence ? vs_all["persistence"] : json(nullptr);
  j["baselines"] = baselines;
  j["vs_baselines"] = r.baselines.empty() ? json(nullptr) : vs_all;
  j["compared_in"] = compared_in_original(r) ? "original_units" : "model_units";
  j["series"] = r.baselines.empty() ? json(nullptr) : series_json(r, groups);
  j["excluded_members"] = r.excluded;
  return j.dump(2) + "\n";
}

std::string group_eval_table(const EvalRecord& r, const std::string& run_path, const std::vector<std::string>& groups) {
  const int S = static_cast<int>(r.member.size()), first = S ? r.member.front() : 0;
  const auto [lo, hi] = std::minmax_element(r.member_samples.begin(), r.member_samples.end());
  std::string t = fmt::format("{}: {}, {} samples\n{} members (#{}..#{}), one per group, each scored on its own "
                              "samples ({}..{} per member)\n", run_path, r.source, r.n_samples, S, first, first + S - 1,
                              lo == r.member_samples.end() ? 0 : *lo, hi == r.member_samples.end() ? 0 : *hi);
  if (!r.excluded.empty())
    t += fmt::format("left out (non-finite predictions, diverged): members {}\n", member_list(r.excluded));
  t += fmt::format("\nper-member metrics: quantiles across members, and pooled over all samples\n");
  t += units_block(r, r.original.empty() ? "metric" : "model units", r.quantiles, r.pooled, false);
  if (!r.original.empty()) t += units_block(r, "original units", r.original.quantiles, r.original.pooled, true);
  // Best and worst member by the first error metric (mae for regression, accuracy otherwise).
  const std::size_t m = r.task == "regression" ? metric_index(r, "mae") : 0;
  const bool higher = higher_is_better(r.metrics[m]);
  int best = -1, worst = -1;
  const std::size_t M = r.metrics.size();
  for (int s = 0; s < S; ++s) {
    const double v = r.members[s * M + m];
    if (!std::isfinite(v)) continue;
    if (best < 0 || (higher ? v > r.members[best * M + m] : v < r.members[best * M + m])) best = s;
    if (worst < 0 || (higher ? v < r.members[worst * M + m] : v > r.members[worst * M + m])) worst = s;
  }
  const auto who = [&](int s) {
    return fmt::format("#{}{} {}", r.member[s], s < static_cast<int>(groups.size()) ? " (" + groups[s] + ")" : "",
                       num(r.members[s * M + m]));
  };
  if (best >= 0)
    t += fmt::format("\nby {}{}: best {}, worst {}\n", r.metrics[m], r.original.empty() ? "" : " in model units",
                     who(best), who(worst));
  t += series_table(r, groups);
  if (!r.baselines.empty())
    t += fmt::format("\n{} units:\n", compared_in_original(r) ? "original" : "model");
  for (const EvalRecord::Baseline& b : r.baselines) t += "  " + beat_line(r, b) + "\n";
  return t;
}

std::string naive_table(const NaiveComparison& c) {
  const EvalRecord& r = c.ensemble;
  if (c.empty()) return "";
  const bool original = compared_in_original(r);
  std::string t = fmt::format("\nthe ensemble against naive forecasts, on each series' own samples ({} series)\n",
                              r.member.size());
  t += series_table(r, c.series, false);
  t += fmt::format("\n{} units:\n", original ? "original" : "model");
  for (const EvalRecord::Baseline& b : r.baselines) t += "  " + beat_line(r, b) + "\n";
  const std::size_t m = metric_index(r, "mae");
  const std::vector<double>& pooled = original ? r.original.pooled : r.pooled;
  if (r.member.size() > 1)
    for (const EvalRecord::Baseline& b : r.baselines) {
      const std::vector<double>& base = original && !b.original.empty() ? b.original.pooled : b.scores.pooled;
      t += fmt::format("  all series pooled: the ensemble's mae {} against {}'s {} (skill {:+.3f})\n", num(pooled[m]),
                       b.kind, num(base[m]), skill_score(pooled[m], base[m]));
    }
  t += "each member on every sample the naive forecast has (all series pooled); skill = 1 − member/baseline\n";
  for (const MemberSkill& k : c.members)
    t += fmt::format("  {} by {} ({}): {} of {} members beat it, skill median {:+.3f} (5%-95% {:+.3f} to {:+.3f})\n",
                     k.kind, k.metric, num(k.baseline), k.beat, k.compared, k.quantiles[3], k.quantiles[1],
                     k.quantiles[5]);
  return t;
}

namespace {
json quantile_list(const std::vector<double>& q) {
  json a = json::array();
  for (double v : q) a.push_back(number(v));
  return a;
}
}  // namespace

json naive_json(const NaiveComparison& c) {
  const EvalRecord& r = c.ensemble;
  if (c.empty()) return nullptr;
  json vs_all = json::object();
  for (const EvalRecord::Baseline& b : r.baselines) {
    json vs = json::object();
    for (const BaselineComparison& x : compare_with_baseline(r.metrics, compared_members(r), compared_members(r, b)))
      vs[x.metric] = {{"beat", x.beat}, {"compared", x.compared}, {"median_ratio", number(x.median_ratio)}};
    vs_all[b.kind] = vs;
  }
  json members = json::array();
  for (const MemberSkill& k : c.members)
    members.push_back({{"kind", k.kind}, {"metric", k.metric}, {"baseline", number(k.baseline)}, {"beat", k.beat},
                       {"compared", k.compared}, {"skill_quantiles", quantile_list(k.quantiles)}});
  const bool original = compared_in_original(r);
  json pooled = json::object();
  for (const EvalRecord::Baseline& b : r.baselines) {
    const std::vector<double>& base = original && !b.original.empty() ? b.original.pooled : b.scores.pooled;
    const std::vector<double>& model = original ? r.original.pooled : r.pooled;
    json o = json::object();
    for (const std::string& name : baseline_compared_metrics()) {
      const std::size_t m = metric_index(r, name);
      if (r.metrics[m] != name) continue;
      o[name] = number(base[m]);
      o["ensemble_" + name] = number(model[m]);
      o["skill_" + name] = number(skill_score(model[m], base[m]));
    }
    pooled[b.kind] = o;
  }
  return {{"compared_in", original ? "original_units" : "model_units"},
          {"vs_baselines", vs_all},
          {"pooled", pooled},
          {"series", series_json(r, c.series, false)},
          {"members", members}};
}

std::string group_eval_summary(const EvalRecord& r) {
  const std::size_t m = r.task == "regression" ? metric_index(r, "mae") : 0, L = kQuantileLevels.size();
  const auto q = [&](const std::vector<double>& v, std::size_t k) { return num(v[m * L + k]); };
  std::string t = fmt::format("{} ({} samples): per-member {} median {} (5%-95% {}-{}), pooled {}", r.source,
                              r.n_samples, r.metrics[m], q(r.quantiles, 3), q(r.quantiles, 1), q(r.quantiles, 5),
                              num(r.pooled[m]));
  for (const EvalRecord::Baseline& b : r.baselines) {
    const std::vector<BaselineComparison> c = compare_with_baseline(r.metrics, compared_members(r), compared_members(r, b));
    const auto it = std::find_if(c.begin(), c.end(), [&](const BaselineComparison& x) { return x.metric == r.metrics[m]; });
    if (it != c.end())
      t += fmt::format("{} {} of {} series beat {} (median ratio {})", &b == &r.baselines.front() ? " |" : ";", it->beat,
                       it->compared, b.kind, num(it->median_ratio));
  }
  return t;
}

}  // namespace tn
