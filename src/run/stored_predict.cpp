// A stored swarm's forward pass over its inputs (see stored_predict.h).
#include "run/stored_predict.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "backend/backend.h"
#include "data/prepare.h"
#include "run/errors.h"
#include "train/swarm_forward.h"

namespace tn {
namespace {

// Model outputs of a non-sequence run with data.normalize_target in original units (stored
// statistics), each member's with its own (per-member statistics: its row of
// /data/normalization/member_target_*; per group: its group's row) before any ensemble: the
// swarm's [S, N, O], or with `member` one output row per sample, by the member that predicted it.
void outputs_to_original(const StoredSwarm& run, std::vector<float>& v, const std::vector<int>* member = nullptr) {
  if (run.file.data.seq_len > 0) return;
  const Normalization& n = run.file.normalization;
  const Normalize m = run.cfg.data.normalize_target;
  const int O = run.shape.outputs();
  if (member) targets_to_original(v, O, m, n.target_mean.data, n.target_std.data, *member);
  else if (!n.member_target_mean.data.empty())
    member_targets_to_original(v, run.S, 0, O, m, n.member_target_mean.data, n.member_target_std.data);
  else member_targets_to_original(v, run.S, run.first_member, O, m, n.target_mean.data, n.target_std.data);
}

// The device `device: auto` picks, with `threads` CPU threads.
std::unique_ptr<Backend> auto_backend(int threads) {
  std::string note;
  std::unique_ptr<Backend> be = make_backend({DeviceKind::Auto, threads}, &note);
  if (!note.empty()) spdlog::debug("{}", note);
  return be;
}

}  // namespace

SwarmPredictions run_swarm(const StoredSwarm& run, const Inputs& in, int threads) {
  const std::unique_ptr<Backend> be = auto_backend(threads);
  SwarmPredictions p;
  if (run.architectures.empty()) {
    p = predict_swarm(*be, run.shape, run.cfg.loss.type, run.params, run.S, in.X, in.n, in.batch);
  } else {
    std::vector<SwarmPart> parts;
    for (const StoredArchitecture& a : run.architectures) parts.push_back({&a.shape, &a.params, a.members});
    p = predict_parts(*be, run.cfg.loss.type, parts, run.S, run.shape.outputs(), in.X, in.n, in.batch);
  }
  outputs_to_original(run, p.outputs);
  return p;
}

void check_combine(const StoredSwarm& run, Combine how) {
  if (how == Combine::Vote && !run.classification)
    throw UsageError("--combine vote needs a classification run; a regression ensemble is the mean");
}

GroupPredictions run_per_group(const StoredSwarm& run, const Inputs& in, int threads) {
  const std::unique_ptr<Backend> be = auto_backend(threads);
  std::vector<int> member(in.group);
  for (int& m : member) m -= run.first_member;
  GroupPredictions p = predict_per_group(*be, run.shape, run.cfg.loss.type, run.params, run.S, in.X, in.n, in.batch, member);
  outputs_to_original(run, p.outputs, &in.group);
  if (!in.units.identity()) p.outputs_original = in.units.original(p.outputs);
  return p;
}

}  // namespace tn
