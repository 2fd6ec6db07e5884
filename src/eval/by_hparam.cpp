// Best member per metric and metrics grouped by hyperparameter value.
#include "eval/by_hparam.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tn {

bool higher_is_better(const std::string& name) {
  for (const char* prefix : {"accuracy", "precision", "recall", "f1", "r2"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

HparamReport hparam_report(const Evaluation& e,
                           const std::vector<std::pair<std::string, std::vector<double>>>& hparams) {
  HparamReport r;
  const std::size_t M = e.names.size(), S = e.members.size();
  const auto usable = [&](std::size_t s, std::size_t m) {
    return s < S && m < e.members[s].values.size() && std::isfinite(e.members[s].values[m]);
  };
  r.best.assign(M, -1);
  for (std::size_t m = 0; m < M; ++m) {
    const bool up = higher_is_better(e.names[m]);
    for (std::size_t s = 0; s < S; ++s) {
      if (!usable(s, m)) continue;
      const int b = r.best[m];
      if (b < 0 || (up ? e.members[s].values[m] > e.members[b].values[m] : e.members[s].values[m] < e.members[b].values[m]))
        r.best[m] = static_cast<int>(s);
    }
  }
  for (const auto& [key, values] : hparams) {
    if (values.size() != S) continue;  // written for another swarm: nothing to match
    r.keys.push_back(key);
    r.values.push_back(values);
    std::map<double, std::vector<std::size_t>> groups;
    for (std::size_t s = 0; s < S; ++s) groups[values[s]].push_back(s);
    std::vector<HparamGroup> out;
    for (const auto& [value, members] : groups) {
      HparamGroup g;
      g.value = value;
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
      out.push_back(g);
    }
    r.by_value.push_back(out);
  }
  return r;
}

}  // namespace tn
