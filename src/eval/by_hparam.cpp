// Best member per metric and metrics grouped by hyperparameter value.
#include "eval/by_hparam.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace tn {

bool higher_is_better(const std::string& name) {
  for (const char* prefix : {"accuracy", "precision", "recall", "f1", "r2", "roc_auc", "pr_auc"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string HparamReport::value_text(std::size_t key, std::size_t member) const {
  if (!texts[key].empty()) return texts[key][member];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", values[key][member]);
  return buf;
}

HparamReport hparam_report(const Evaluation& e,
                           const std::vector<std::pair<std::string, std::vector<double>>>& hparams,
                           const std::vector<std::pair<std::string, std::vector<std::string>>>& text,
                           const Evaluation* rank_on) {
  HparamReport r;
  const std::size_t M = e.names.size(), S = e.members.size();
  const auto usable_in = [&](const Evaluation& x, std::size_t s, std::size_t m) {
    return s < x.members.size() && m < x.members[s].values.size() && std::isfinite(x.members[s].values[m]);
  };
  const auto usable = [&](std::size_t s, std::size_t m) { return usable_in(e, s, m); };
  const Evaluation& on = rank_on ? *rank_on : e;
  r.best.assign(M, -1);
  for (std::size_t m = 0; m < M && m < on.names.size(); ++m) {
    const bool up = higher_is_better(on.names[m]);
    for (std::size_t s = 0; s < S; ++s) {
      if (!usable(s, m) || !usable_in(on, s, m)) continue;
      const int b = r.best[m];
      const double v = on.members[s].values[m];
      if (b < 0 || (up ? v > on.members[b].values[m] : v < on.members[b].values[m])) r.best[m] = static_cast<int>(s);
    }
  }
  // Statistics of the members in `groups` (value -> members) for each metric.
  const auto stats = [&](HparamGroup g, const std::vector<std::size_t>& members) {
    g.mean.assign(M, NAN);
    g.std.assign(M, NAN);
    for (std::size_t m = 0; m < M; ++m) {
      double sum = 0, sq = 0;
      int n = 0;
      for (std::size_t s : members)
        if (usable(s, m)) {
          sum += e.members[s].values[m];
          ++n;
        }
      if (n == 0) continue;
      const double mean = sum / n;
      for (std::size_t s : members)
        if (usable(s, m)) sq += (e.members[s].values[m] - mean) * (e.members[s].values[m] - mean);
      g.mean[m] = mean;
      g.std[m] = std::sqrt(sq / n);
      g.members = std::max(g.members, n);
    }
    return g;
  };
  for (const auto& [key, values] : hparams) {
    if (values.size() != S) continue;  // written for another swarm: nothing to match
    r.keys.push_back(key);
    r.values.push_back(values);
    r.texts.emplace_back();
    std::map<double, std::vector<std::size_t>> groups;
    for (std::size_t s = 0; s < S; ++s) groups[values[s]].push_back(s);
    std::vector<HparamGroup> out;
    for (const auto& [value, members] : groups) {
      HparamGroup g;
      g.value = value;
      g.member_list.assign(members.begin(), members.end());
      out.push_back(stats(g, members));
    }
    r.by_value.push_back(out);
  }
  for (const auto& [key, values] : text) {
    if (values.size() != S) continue;
    r.keys.push_back(key);
    r.values.emplace_back();
    r.texts.push_back(values);
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t s = 0; s < S; ++s) {
      auto& g = groups[values[s]];
      if (g.empty()) order.push_back(values[s]);
      g.push_back(s);
    }
    std::vector<HparamGroup> out;
    for (const std::string& v : order) {
      HparamGroup g;
      g.text = v;
      g.member_list.assign(groups[v].begin(), groups[v].end());
      out.push_back(stats(g, groups[v]));
    }
    r.by_value.push_back(out);
  }
  return r;
}

}  // namespace tn
