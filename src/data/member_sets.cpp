// Per-member training sets.
#include "data/member_sets.h"

#include <algorithm>
#include <cmath>

namespace tn {

std::uint32_t MemberSets::max_size() const {
  if (equal_sizes()) return m;
  if (positions) return positions;
  std::uint32_t mx = 0;
  for (std::size_t s = 0; s + 1 < offset.size(); ++s) mx = std::max(mx, offset[s + 1] - offset[s]);
  return mx;
}

namespace {

std::uint32_t fraction_of(double f, int n) {
  return static_cast<std::uint32_t>(std::max<long>(1, std::lround(f * n)));
}

MemberSets shards(const Config& cfg, int n) {
  const int S = cfg.swarm.size;
  if (S > n)
    throw ConfigError("data.per_member: shards splits the " + std::to_string(n) + " training samples into " +
                      std::to_string(S) + " parts, so some members would get none; use fewer members");
  MemberSets r;
  r.mode = SampleMode::Sets;
  r.rows.resize(n);
  random_permutation(cfg.seed, Purpose::Shards, 0, static_cast<std::uint32_t>(n), r.rows.data());
  for (int s = 0; s <= S; ++s) r.offset.push_back(static_cast<std::uint32_t>(static_cast<std::int64_t>(s) * n / S));
  return r;
}

MemberSets groups(const Config& cfg, const PreparedData& data) {
  const int G = static_cast<int>(data.group_names.size());
  if (cfg.swarm.size != G || cfg.swarm.first_member != 0)
    throw ConfigError("swarm.size: data.per_member group_by '" + cfg.data.group_by + "' makes one member per group, and the data has " +
                      std::to_string(G) + " groups; set swarm.size: " + std::to_string(G) +
                      " (or leave swarm.size out: it defaults to the number of groups) and first_member: 0");
  MemberSets r;
  r.mode = SampleMode::Sets;
  r.names = data.group_names;
  std::vector<std::uint32_t> count(G + 1, 0);
  for (int g : data.train.group) ++count[g + 1];
  for (int g = 0; g < G; ++g) {
    if (count[g + 1] == 0)
      throw ConfigError("data.per_member: group '" + data.group_names[g] + "' of column '" + cfg.data.group_by +
                        "' has no samples in the training split; give it more rows or lower split.val/test");
    count[g + 1] += count[g];
  }
  r.offset = count;
  r.rows.resize(data.train.n);
  std::vector<std::uint32_t> next(count.begin(), count.end() - 1);
  for (int i = 0; i < data.train.n; ++i) r.rows[next[data.train.group[i]]++] = static_cast<std::uint32_t>(i);
  return r;
}

// bootstrap: {stratify: true}: member k draws round(fraction·n_c) of class c's n_c training
// rows with replacement, for each class c; draw j of class c is word 0 of
// (seed, k, Bootstrap, (c + 1) << 32 | j), so a member's set does not depend on the swarm.
MemberSets stratified_bootstrap(const Config& cfg, const PreparedData& data) {
  const auto K = static_cast<std::size_t>(data.num_classes);
  std::vector<std::vector<std::uint32_t>> rows(K);
  for (int i = 0; i < data.train.n; ++i)
    rows[static_cast<std::size_t>(data.train.y[i])].push_back(static_cast<std::uint32_t>(i));
  MemberSets r;
  r.mode = SampleMode::Sets;
  r.offset.push_back(0);
  for (int s = 0; s < cfg.swarm.size; ++s) {
    const auto member = static_cast<std::uint32_t>(cfg.swarm.first_member + s);
    for (std::size_t c = 0; c < K; ++c) {
      const auto n_c = static_cast<std::uint32_t>(rows[c].size());
      if (n_c == 0) continue;
      const std::uint32_t m_c = fraction_of(cfg.data.member_fraction, static_cast<int>(n_c));
      for (std::uint32_t j = 0; j < m_c; ++j) {
        const std::uint64_t counter = (static_cast<std::uint64_t>(c + 1) << 32) | j;
        r.rows.push_back(rows[c][uniform_below(random_words(cfg.seed, member, Purpose::Bootstrap, counter).v[0], n_c)]);
      }
    }
    r.offset.push_back(static_cast<std::uint32_t>(r.rows.size()));
  }
  return r;
}

// Appends members [begin, end)'s target statistics (if any) to `to`'s.
void take_target_rows(const MemberSets& from, int begin, int end, MemberSets& to) {
  if (from.target_mean.empty()) return;
  const auto T = static_cast<std::ptrdiff_t>(from.targets);
  to.targets = from.targets;
  to.target_mean.insert(to.target_mean.end(), from.target_mean.begin() + begin * T, from.target_mean.begin() + end * T);
  to.target_std.insert(to.target_std.end(), from.target_std.begin() + begin * T, from.target_std.begin() + end * T);
}

// Local member s's training rows (bootstrap: its draws in draw order, repeats kept; draw j of
// member k is its sample at epoch position p with order[p] = j).
std::vector<std::uint32_t> member_rows(const MemberSets& sets, std::uint64_t seed, int first_member, std::uint32_t n,
                                       int s) {
  if (!sets.equal_sizes()) return {sets.rows.begin() + sets.offset[s], sets.rows.begin() + sets.offset[s + 1]};
  BatchSampler draw;
  draw.mode = sets.mode;
  draw.seed = seed;
  draw.n = n;
  std::vector<std::uint32_t> rows(sets.m);
  for (std::uint32_t j = 0; j < sets.m; ++j) rows[j] = draw.index(static_cast<std::uint32_t>(first_member + s), j);
  return rows;
}

// Each member's target statistics [S, T] from the training targets (f(y)) of its own rows.
void fit_member_targets(MemberSets& sets, const Config& cfg, const PreparedData& data) {
  const int T = data.targets, S = cfg.swarm.size;
  sets.targets = T;
  sets.target_mean.assign(static_cast<std::size_t>(S) * T, 0.0f);
  sets.target_std.assign(static_cast<std::size_t>(S) * T, 1.0f);
  std::vector<float> y;
  for (int s = 0; s < S; ++s) {
    y.clear();
    for (std::uint32_t r : member_rows(sets, cfg.seed, cfg.swarm.first_member, static_cast<std::uint32_t>(data.train.n), s))
      y.insert(y.end(), data.train.y.begin() + static_cast<std::ptrdiff_t>(r) * T,
               data.train.y.begin() + static_cast<std::ptrdiff_t>(r + 1) * T);
    fit_target_statistics(y, T, cfg.data.normalize_target, sets.target_mean, sets.target_std,
                          static_cast<std::size_t>(s) * T);
  }
}

MemberSets member_sets_of(const Config& cfg, const PreparedData& data) {
  const int n = data.train.n;
  MemberSets r;
  switch (cfg.data.per_member) {
    case PerMember::Shared:
      r.mode = SampleMode::Shared;
      r.m = static_cast<std::uint32_t>(n);
      return r;
    case PerMember::Bootstrap:
      if (cfg.data.bootstrap_stratify) return stratified_bootstrap(cfg, data);
      r.mode = SampleMode::Bootstrap;
      r.m = fraction_of(cfg.data.member_fraction, n);
      return r;
    case PerMember::Subsample:
      r.mode = SampleMode::Subsample;
      r.m = fraction_of(cfg.data.member_fraction, n);
      return r;
    case PerMember::Shards: return shards(cfg, n);
    case PerMember::GroupBy: return groups(cfg, data);
  }
  return r;
}

}  // namespace

void resolve_group_swarm(Config& cfg, const PreparedData& data) {
  if (!cfg.swarm.size_from_groups) return;
  cfg.swarm.size = static_cast<int>(data.group_names.size());
  cfg.swarm.size_from_groups = false;
}

MemberSets make_member_sets(const Config& cfg, const PreparedData& data) {
  MemberSets r = member_sets_of(cfg, data);
  if (member_target_statistics(cfg.data) && data.seq_len == 0 && data.targets > 0) fit_member_targets(r, cfg, data);
  return r;
}

void member_epoch_rows(const MemberSets& sets, int s, const std::uint32_t* order, std::uint32_t stride,
                       std::uint32_t* out) {
  const std::uint32_t size = sets.size(s), begin = sets.offset[s], total = sets.max_size();
  std::uint32_t k = 0;
  for (std::uint32_t p = 0; p < total && k < size; ++p) {
    const std::uint32_t j = order ? order[p] : p;
    if (j < size) out[k++] = sets.rows[begin + j];
  }
  const std::uint32_t pad = size ? sets.rows[begin] : 0;
  for (; k < stride; ++k) out[k] = pad;
}

MemberSets group_sample_sets(const std::vector<int>& member, int S) {
  MemberSets r;
  r.mode = SampleMode::Sets;
  r.offset.assign(static_cast<std::size_t>(S) + 1, 0);
  for (int m : member)
    if (m >= 0 && m < S) ++r.offset[m + 1];
  for (int s = 0; s < S; ++s) r.offset[s + 1] += r.offset[s];
  r.rows.resize(r.offset[S]);
  std::vector<std::uint32_t> next(r.offset.begin(), r.offset.end() - 1);
  for (std::size_t i = 0; i < member.size(); ++i)
    if (member[i] >= 0 && member[i] < S) r.rows[next[member[i]]++] = static_cast<std::uint32_t>(i);
  return r;
}

MemberSets slice_member_sets(const MemberSets& sets, int begin, int end) {
  MemberSets r;
  r.mode = sets.mode;
  r.m = sets.m;
  if (!sets.names.empty()) r.names.assign(sets.names.begin() + begin, sets.names.begin() + end);
  take_target_rows(sets, begin, end, r);
  if (sets.equal_sizes()) return r;
  r.positions = sets.max_size();
  const std::uint32_t first = sets.offset[begin];
  r.rows.assign(sets.rows.begin() + first, sets.rows.begin() + sets.offset[end]);
  for (int s = begin; s <= end; ++s) r.offset.push_back(sets.offset[s] - first);
  return r;
}

MemberSets select_member_sets(const MemberSets& sets, const std::vector<int>& members, int first_member,
                              std::uint64_t seed, std::uint32_t n) {
  MemberSets r;
  if (sets.mode == SampleMode::Shared) return sets;
  for (int s : members)
    if (!sets.names.empty()) r.names.push_back(sets.names[static_cast<std::size_t>(s)]);
  r.mode = SampleMode::Sets;
  r.positions = sets.max_size();
  r.offset.push_back(0);
  for (int s : members) {
    take_target_rows(sets, s, s + 1, r);
    const std::vector<std::uint32_t> rows = member_rows(sets, seed, first_member, n, s);
    r.rows.insert(r.rows.end(), rows.begin(), rows.end());
    r.offset.push_back(static_cast<std::uint32_t>(r.rows.size()));
  }
  return r;
}

GroupRows group_rows(const std::vector<int>& group, int first_member, int S, int batch) {
  std::vector<int> member(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) member[i] = group[i] - first_member;
  const MemberSets own = group_sample_sets(member, S);
  GroupRows r;
  r.steps = static_cast<int>((own.max_size() + batch - 1) / batch);
  r.stride = static_cast<std::uint32_t>(r.steps) * batch;
  r.table.assign(static_cast<std::size_t>(S) * r.stride, 0);
  r.rows.assign(static_cast<std::size_t>(r.steps) * S, 0);
  for (int s = 0; s < S; ++s) {
    r.count.push_back(own.size(s));
    member_epoch_rows(own, s, nullptr, r.stride, r.table.data() + static_cast<std::size_t>(s) * r.stride);
    for (int step = 0; step < r.steps; ++step)
      r.rows[static_cast<std::size_t>(step) * S + s] =
          static_cast<int>(std::clamp<long>(static_cast<long>(own.size(s)) - static_cast<long>(step) * batch, 0, batch));
  }
  return r;
}

}  // namespace tn
