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
  const ParamLayout layout(run.shape, run.S);
  std::vector<int> members;
  for (int s = 0; s < run.S; ++s) {
    bool finite = true;
    for (int t = 0; t < run.shape.tensors() && finite; ++t) {
      const float* p = run.params.data() + layout.at(t, s);
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

}  // namespace tn
