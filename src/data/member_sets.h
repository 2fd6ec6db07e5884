// What each member trains on, from data.per_member: the sampler mode and per-member set
// sizes; for shards and group_by also each member's rows of the training split; with
// data.normalize_target and bootstrap, subsample or shards, each member's target statistics.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "data/prepare.h"
#include "swarm/sampler.h"

namespace tn {

struct MemberSets {
  SampleMode mode = SampleMode::Shared;
  std::uint32_t m = 0;                 // equal-size modes: samples per member
  std::vector<std::uint32_t> rows;     // sets mode: members' training rows, concatenated
  std::vector<std::uint32_t> offset;   // sets mode: [S + 1] start of local member s in rows
  std::vector<std::string> names;      // group_by: the group of each member
  std::uint32_t positions = 0;         // sets mode, nonzero in a slice: the whole swarm's max_size
  // Per-member target statistics [S, T] (member_target_statistics: bootstrap, subsample or shards
  // with data.normalize_target), local member s's from its own training rows (bootstrap: its
  // draws, repeats counted); the training split then holds f(y), and member s learns
  // y' = (f(y) − target_mean[s, t]) / target_std[s, t], scaled as it gathers its batches.
  // Empty otherwise (statistics in PreparedData, the splits already scaled).
  std::vector<float> target_mean, target_std;
  int targets = 0;  // T of target_mean and target_std

  bool equal_sizes() const { return mode != SampleMode::Sets; }
  std::uint32_t size(int s) const { return equal_sizes() ? m : offset[s + 1] - offset[s]; }
  std::uint32_t max_size() const;
};

// swarm.size_from_groups (group_by without swarm.size): sets cfg.swarm.size to the number of
// groups in `data`. No-op otherwise.
void resolve_group_swarm(Config& cfg, const PreparedData& data);

// Builds the sets for members [first_member, first_member + size), and with
// member_target_statistics(cfg.data) each member's target statistics from its own rows (the
// rows a member trained alone with the same seed gets, so the same statistics). Throws
// ConfigError when the swarm does not fit the mode (group_by needs one member per group;
// shards need at least one sample per member).
MemberSets make_member_sets(const Config& cfg, const PreparedData& data);

// Local members [begin, end) of `sets` as sets of their own, numbered from 0. The slice
// keeps the whole swarm's epoch length (max_size), so its members see exactly the batches
// they see in the whole swarm (chunked training).
MemberSets slice_member_sets(const MemberSets& sets, int begin, int end);

// Local members `members` (in that order) of `sets` as sets of their own, numbered from 0, each
// seeing exactly the batches it sees in the whole swarm: shared sets stay shared; bootstrap and
// subsample sets (first_member + s is member s's global index, `seed` the run's, n the training
// split's size) become explicit rows in sets mode, so that no member index enters the sampler;
// sets-mode rows are gathered, keeping the whole swarm's epoch length.
MemberSets select_member_sets(const MemberSets& sets, const std::vector<int>& members, int first_member,
                              std::uint64_t seed, std::uint32_t n);

// Sets mode over the samples of a split: local member s gets the samples i with member[i] == s
// in sample order (member[i] outside [0, S) belongs to no member). How group_by runs predict
// and score each member on its own group's samples only.
MemberSets group_sample_sets(const std::vector<int>& member, int S);

// Writes member s's epoch order over its set into out[0..size): the shared epoch order of
// [0, max_size) filtered to values below the member's size (a uniformly random order of
// its own samples), mapped to training rows; positions up to `stride` are padded with the
// member's first row (never used by a loss: those rows are masked; row 0 for an empty set).
void member_epoch_rows(const MemberSets& sets, int s, const std::uint32_t* order, std::uint32_t stride,
                       std::uint32_t* out);

// group_by: each member's own rows of a split (validation, test), laid out for batched passes
// over a block: member s (local) gets the rows whose group is first_member + s, padded to a
// whole number of `batch`-row steps with its first row (or row 0 when it has none).
struct GroupRows {
  int steps = 0;                      // batches that cover the largest member's rows
  std::uint32_t stride = 0;           // steps · batch: table entries per member
  std::vector<std::uint32_t> table;   // [S, stride] split rows, for BatchSampler sets mode
  std::vector<int> rows;              // [steps, S] valid rows of each member at each step
  std::vector<std::uint32_t> count;   // [S] rows per member
};
GroupRows group_rows(const std::vector<int>& group, int first_member, int S, int batch);

}  // namespace tn
