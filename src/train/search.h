// Search inside the swarm (config `search`): the decisions successive halving and
// population-based training take between epochs, as pure functions of the members' metric
// and (PBT) of (seed, member, round). train/search_steps.cpp applies them to the swarm's state.
#pragma once
#include <cstdint>
#include <vector>

#include "config/config.h"

namespace tn {

// The order of members by `value` from best to worst: ascending, or descending when
// `maximize`; a non-finite value is worst; ties go to the lower member index. Only the
// members with candidate[k] != 0 are ranked.
std::vector<int> rank_members(const std::vector<double>& value, const std::vector<char>& candidate, bool maximize);

// Successive halving at one rung: of the candidates (members still training), those to stop,
// all but the best max(1, ceil(keep·n)), in member order.
std::vector<int> halving_cut(const std::vector<double>& value, const std::vector<char>& candidate, bool maximize,
                             double keep);

// One PBT round (1-based `round`) over a swarm of S members (indices local; draws keyed by the
// global member, swarm.first_member + k).
struct PbtRound {
  std::vector<int> source;  // [S] the member whose state member k takes (k itself: kept)
  // [K, S] each perturbed key's value for member k after the round (search.perturb order)
  std::vector<std::vector<double>> values;
};

// The bottom floor(quantile·S) members by `value` take the state of a member drawn uniformly
// from the top as many, and the source's values of the perturb keys (`values` [K, S], now in
// effect), each then resampled from the key's per-member values with resample_probability or
// else multiplied by one of its factors drawn uniformly. Every draw is a pure function of
// (seed, member, round): Purpose::Search.
PbtRound pbt_round(const Config& cfg, int round, const std::vector<double>& value,
                   const std::vector<std::vector<double>>& values);

// Keeps a perturbed optimizer value valid: momentum, beta1, beta2 and alpha stay below 1.
double clamp_search_value(const std::string& key, double v);

}  // namespace tn
