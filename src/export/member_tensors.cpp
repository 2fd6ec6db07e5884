// Choosing the exported members and cutting their tensors out of the swarm layout.
#include "export/member_tensors.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace tn {

std::vector<int> choose_members(const StoredSwarm& run, const MemberChoice& choice) {
  const int last = run.first_member + run.S - 1;
  if (choice.member && choice.ensemble)
    throw UsageError("--member and --ensemble: choose one (a member alone, or every member in one graph)");
  if (choice.member) {
    const int k = *choice.member;
    if (k < run.first_member || k > last)
      throw UsageError("--member " + std::to_string(k) + ": run file '" + run.path + "' holds members " +
                       std::to_string(run.first_member) + ".." + std::to_string(last) + "; pass one of those");
    return {k - run.first_member};
  }
  if (one_member_per_group(run))
    throw UsageError("run file '" + run.path + "' has one member per group (data.per_member group_by), and an "
                     "ensemble across groups means nothing; export one member with --member K (" +
                     std::to_string(run.first_member) + ".." + std::to_string(last) + ")");
  std::vector<int> members;
  std::vector<StoredSwarm> views;  // one per architecture of a mixed swarm
  for (std::size_t a = 0; a < run.architectures.size(); ++a) views.push_back(architecture_view(run, a));
  for (int s = 0; s < run.S; ++s) {
    const auto [a, j] = architecture_of(run, s);
    const StoredSwarm* own = views.empty() ? &run : &views[a];
    const ParamLayout layout(own->shape, own->S);
    bool finite = true;
    for (int t = 0; t < own->shape.tensors() && finite; ++t) {
      const float* p = own->params.data() + layout.at(t, j);
      finite = std::all_of(p, p + layout.size[t], [](float v) { return std::isfinite(v); });
    }
    if (finite) members.push_back(s);
    else spdlog::warn("member {} has non-finite parameters (diverged) and is left out of the ensemble", run.first_member + s);
  }
  if (members.empty())
    throw UsageError("every member of run file '" + run.path + "' has non-finite parameters (diverged); "
                     "there is nothing to export");
  return members;
}

StoredSwarm architecture_view(const StoredSwarm& run, std::size_t a) {
  const StoredArchitecture& arch = run.architectures.at(a);
  StoredSwarm v;
  v.path = run.path;
  v.file.config_yaml = run.file.config_yaml;
  v.file.data = run.file.data;
  v.file.normalization = run.file.normalization;
  Normalization& n = v.file.normalization;
  if (!n.member_target_mean.data.empty()) {  // per-member statistics: the architecture's members' rows, in its order
    const std::size_t T = static_cast<std::size_t>(run.shape.outputs());
    const std::vector<std::uint64_t> shape{arch.members.size(), T};
    n.member_target_mean = {shape, stats_rows(n.member_target_mean.data, T, arch.members)};
    n.member_target_std = {shape, stats_rows(n.member_target_std.data, T, arch.members)};
  }
  v.cfg = run.cfg;
  v.cfg.model = member_model(run.cfg, run.first_member + arch.members.front());
  v.shape = arch.shape;
  v.params = arch.params;
  v.S = static_cast<int>(arch.members.size());
  v.first_member = run.first_member;
  v.classification = run.classification;
  v.K = run.K;
  v.class_names = run.class_names;
  v.encoding = run.encoding;
  return v;
}

std::pair<std::size_t, int> architecture_of(const StoredSwarm& run, int s) {
  for (std::size_t a = 0; a < run.architectures.size(); ++a) {
    const std::vector<int>& m = run.architectures[a].members;
    const auto it = std::find(m.begin(), m.end(), s);
    if (it != m.end()) return {a, static_cast<int>(it - m.begin())};
  }
  return {0, s};
}

std::vector<ArchitectureMembers> split_by_architecture(const StoredSwarm& run, const std::vector<int>& members) {
  std::vector<ArchitectureMembers> r(run.architectures.size());
  for (int s : members) {
    if (r.empty()) break;  // one architecture: nothing to split
    const auto [a, j] = architecture_of(run, s);
    r[a].members.push_back(s);
    r[a].local.push_back(j);
  }
  return r;
}

std::vector<float> member_tensor(const StoredSwarm& run, int t, int s) { return stacked_tensor(run, t, {s}); }

std::vector<float> stacked_tensor(const StoredSwarm& run, int t, const std::vector<int>& members) {
  const ParamLayout layout(run.shape, run.S);
  std::vector<float> out;
  out.reserve(members.size() * static_cast<std::size_t>(layout.size[t]));
  for (int s : members) {
    const float* p = run.params.data() + layout.at(t, s);
    out.insert(out.end(), p, p + layout.size[t]);
  }
  return out;
}

std::vector<float> stats_row(const std::vector<float>& stats, std::size_t width, int row) {
  if (stats.size() <= width) return stats;
  const std::size_t at = static_cast<std::size_t>(row) * width;
  if (at + width > stats.size())
    throw UsageError("the run's normalization statistics have no row for member " + std::to_string(row));
  return {stats.begin() + static_cast<std::ptrdiff_t>(at), stats.begin() + static_cast<std::ptrdiff_t>(at + width)};
}

std::vector<float> stats_rows(const std::vector<float>& stats, std::size_t width, const std::vector<int>& rows) {
  std::vector<float> out;
  for (int r : rows) {
    const std::vector<float> row = stats_row(stats, width, r);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

}  // namespace tn
