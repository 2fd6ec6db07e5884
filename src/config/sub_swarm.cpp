// The Config of a sub-swarm (config.h sub_swarm): the one place a Config for some of a
// swarm's members is built, for chunks, shards, architecture groups and search survivors.
#include "config/config.h"

namespace tn {

Config sub_swarm(const Config& cfg, int m0, int m1) {
  Config sub = cfg;
  sub.swarm.first_member = cfg.swarm.first_member + m0;
  sub.swarm.size = m1 - m0;
  if (!cfg.swarm.members.empty()) sub.swarm.members.assign(cfg.swarm.members.begin() + m0, cfg.swarm.members.begin() + m1);
  return sub;
}

Config sub_swarm(const Config& cfg, const std::vector<int>& members) {
  const auto global = [&](int s) {
    return cfg.swarm.members.empty() ? cfg.swarm.first_member + s : cfg.swarm.members[static_cast<std::size_t>(s)];
  };
  Config sub = cfg;
  sub.swarm.size = static_cast<int>(members.size());
  sub.swarm.first_member = 0;
  sub.swarm.members.clear();
  for (int s : members) sub.swarm.members.push_back(global(s));
  sub.grid.clear();
  for (MemberValues& mv : sub.member_values) {
    MemberValues v;
    v.key = mv.key;
    for (int s : members) v.values.push_back(mv.at(static_cast<long long>(cfg.swarm.first_member) + s));
    mv = v;
  }
  return sub;
}

}  // namespace tn
