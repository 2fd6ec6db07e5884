// PBT lineages and halving counts from /search (run/lineage.h).
#include "run/lineage.h"

#include <algorithm>

namespace tn {

std::vector<LineageStep> pbt_lineage(const SearchRecord& r, int member, int epochs) {
  const std::size_t R = r.epochs.size();
  if (R == 0 || r.source.size() % R != 0) return {};
  const std::size_t S = r.source.size() / R;
  std::vector<LineageStep> steps(R + 1);
  int m = member;
  for (std::size_t i = R + 1; i-- > 0;) {  // stretch i: after round i (0: from the start)
    LineageStep& st = steps[i];
    st.member = m;
    st.first_epoch = i == 0 ? 1 : r.epochs[i - 1] + 1;
    st.last_epoch = i == R ? epochs : r.epochs[i];
    for (const std::vector<double>& v : r.values) st.values.push_back(v[i * S + static_cast<std::size_t>(m)]);
    if (i > 0) m = r.source[(i - 1) * S + static_cast<std::size_t>(m)];  // whose state round i gave it
  }
  // Rounds that left the member as it was continue its stretch.
  std::vector<LineageStep> merged;
  for (const LineageStep& st : steps) {
    if (!merged.empty() && merged.back().member == st.member && merged.back().values == st.values)
      merged.back().last_epoch = st.last_epoch;
    else
      merged.push_back(st);
  }
  return merged;
}

std::vector<int> halving_counts(const std::vector<int>& rungs, const std::vector<int>& rung,
                                const std::vector<int>& diverged_epoch) {
  std::vector<int> counts{static_cast<int>(rung.size())};
  for (std::size_t i = 0; i < rungs.size(); ++i) {
    int n = 0;
    for (std::size_t s = 0; s < rung.size(); ++s) {
      const bool diverged = s < diverged_epoch.size() && diverged_epoch[s] > 0 && diverged_epoch[s] <= rungs[i];
      n += (rung[s] == 0 || rung[s] > static_cast<int>(i + 1)) && !diverged;
    }
    counts.push_back(n);
  }
  return counts;
}

std::vector<int> halving_kept(const std::vector<int>& rung, const std::vector<int>& diverged_epoch) {
  std::vector<int> kept;
  for (std::size_t s = 0; s < rung.size(); ++s)
    if (rung[s] == 0 && (s >= diverged_epoch.size() || diverged_epoch[s] < 0)) kept.push_back(static_cast<int>(s));
  if (kept.size() == rung.size()) kept.clear();
  return kept;
}

}  // namespace tn
