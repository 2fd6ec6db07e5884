// Which members of a stored swarm an export holds, and their parameter tensors cut out of the
// swarm-major layout (swarm/shape.h): one member's [rows, cols] or [n], or several stacked.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "run/stored_swarm.h"

namespace tn {

// What to export: one member (global index, as everywhere in turbanet) or the ensemble.
struct MemberChoice {
  std::optional<int> member;  // --member K
  bool ensemble = false;      // --ensemble (the default when no member is named)
};

// The local indices (0..S-1) of the members to export. One member: checked against the run
// (UsageError naming the run's members). The ensemble: refused for group_by runs (each member
// knows only its own group), else every member whose parameters are all finite (a diverged
// member is left out, with a warning, as predict leaves out non-finite predictions).
std::vector<int> choose_members(const StoredSwarm& run, const MemberChoice& choice);

// Members of several architectures (StoredSwarm::architectures): architecture a's members as a
// stored swarm of their own (its shape and parameters, S its members, local index j being
// run member architectures[a].members[j]), for the functions here and in onnx_model.h.
StoredSwarm architecture_view(const StoredSwarm& run, std::size_t a);
// The architecture of local member s and its index there.
std::pair<std::size_t, int> architecture_of(const StoredSwarm& run, int s);

// `members` (local) of a swarm of several architectures, split by architecture: for each
// architecture a, those in it (`members`, in the given order) and their index there (`local`);
// empty for a swarm of one architecture.
struct ArchitectureMembers {
  std::vector<int> members, local;
};
std::vector<ArchitectureMembers> split_by_architecture(const StoredSwarm& run, const std::vector<int>& members);

// Tensor t (ParamLayout order) of local member s: size(t) floats, row-major.
std::vector<float> member_tensor(const StoredSwarm& run, int t, int s);

// Tensor t of `members`, stacked: [members.size(), size(t)].
std::vector<float> stacked_tensor(const StoredSwarm& run, int t, const std::vector<int>& members);

// Row `row` of a [rows, width] statistics array (per-group normalization), or the whole array
// when it holds a single row.
std::vector<float> stats_row(const std::vector<float>& stats, std::size_t width, int row);
// Rows `rows` of a [rows, width] statistics array, concatenated ([rows.size(), width]).
std::vector<float> stats_rows(const std::vector<float>& stats, std::size_t width, const std::vector<int>& rows);

}  // namespace tn
