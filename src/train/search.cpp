// Successive halving's cut and population-based training's exploit/explore (train/search.h).
#include "train/search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "math/rng.h"

namespace tn {

std::vector<int> rank_members(const std::vector<double>& value, const std::vector<char>& candidate, bool maximize) {
  std::vector<int> order;
  for (int k = 0; k < static_cast<int>(value.size()); ++k)
    if (candidate[k]) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const double x = value[a], y = value[b];
    if (!std::isfinite(x) || !std::isfinite(y)) return std::isfinite(x) && !std::isfinite(y);
    return maximize ? x > y : x < y;
  });
  return order;
}

std::vector<int> halving_cut(const std::vector<double>& value, const std::vector<char>& candidate, bool maximize,
                             double keep) {
  const std::vector<int> order = rank_members(value, candidate, maximize);
  const auto n = static_cast<double>(order.size());
  // keep·n rounded up, with a tolerance so that 1/3 of 9 keeps exactly 3
  const auto kept = static_cast<std::size_t>(std::max(1.0, std::ceil(keep * n - 1e-9)));
  std::vector<int> cut(order.begin() + static_cast<std::ptrdiff_t>(std::min(kept, order.size())), order.end());
  std::sort(cut.begin(), cut.end());
  return cut;
}

double clamp_search_value(const std::string& key, double v) {
  if (key == "optimizer.momentum" || key == "optimizer.beta1" || key == "optimizer.beta2" || key == "optimizer.alpha")
    return std::min(v, 0.9999);
  return v;
}

PbtRound pbt_round(const Config& cfg, int round, const std::vector<double>& value,
                   const std::vector<std::vector<double>>& values) {
  const SearchConfig& s = cfg.search;
  const int S = static_cast<int>(value.size());
  PbtRound r;
  r.source.resize(static_cast<std::size_t>(S));
  std::iota(r.source.begin(), r.source.end(), 0);
  r.values = values;
  const std::vector<int> order = rank_members(value, std::vector<char>(static_cast<std::size_t>(S), 1), s.maximize());
  const int q = static_cast<int>(std::floor(s.quantile * S));
  const auto counter = [&](std::uint32_t draw) { return static_cast<std::uint64_t>(round) << 16 | draw; };
  for (int i = S - q; i < S; ++i) {
    const int k = order[i];
    const auto member = static_cast<std::uint32_t>(cfg.swarm.first_member + k);  // draws keyed by the global index
    const Philox4x32 pick = random_words(cfg.seed, member, Purpose::Search, counter(0));
    const int src = order[uniform_below(pick.v[0], static_cast<std::uint32_t>(q))];
    r.source[k] = src;
    for (std::size_t j = 0; j < s.perturb.size(); ++j) {
      const SearchConfig::Perturb& p = s.perturb[j];
      const Philox4x32 w = random_words(cfg.seed, member, Purpose::Search, counter(static_cast<std::uint32_t>(1 + j)));
      double v = values[j][src];
      if (uniform01_double(w.v[0], w.v[1]) < s.resample_probability) {
        const MemberValues* mv = find_member_values(cfg, p.key);  // present: config checks it
        v = mv->value(uniform_below(w.v[2], static_cast<std::uint32_t>(mv->count())));
      } else {
        v *= p.factors[uniform_below(w.v[3], static_cast<std::uint32_t>(p.factors.size()))];
      }
      r.values[j][k] = clamp_search_value(p.key, v);
    }
  }
  return r;
}

}  // namespace tn
