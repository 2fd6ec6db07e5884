// A pass's histories and per-member results between epochs: epoch summaries, divergence,
// history columns and the state a pass starts from. Internal to train/.
#pragma once
#include <functional>
#include <vector>

#include "train/train_output.h"

namespace tn::train_detail {

// Summaries of epochs [e0, e1) of `out` (histories [S, out.epochs]); `diverged` [S] is
// updated (1-based epoch, -1 = never) and a diverged member's later history set to NaN.
std::vector<EpochStats> summarize(TrainOutput& out, int S, int e0, int e1, int first_member,
                                  std::vector<int>& diverged);
// Every member's values of epoch e (0-based) of `out`, after summarize; lr(s): local member s's
// learning rate in it.
std::vector<MemberEpoch> member_epochs(const TrainOutput& out, int S, int e, int first_member,
                                       const std::function<double(int)>& lr);
// NaN predictions for every diverged member (first_member: the swarm's first global index).
void leave_out_diverged(TrainOutput& out, int first_member);
// A [S, from] history as [S, to]: columns cut off, or added as NaN.
std::vector<float> history_columns(const std::vector<float>& h, int from, int to);
// Resizes t's [S, t.epochs] histories to [S, epochs].
void resize_history(TrainOutput& t, int epochs);
// A copy of `out` (histories [S, out.epochs]) with its histories cut to [S, done].
TrainOutput copy_until(TrainOutput& out, int done);
// Starts `out` (histories [S, train.epochs]) from `from`: its initial parameters (when it has
// them), histories, divergence, early-stopping and search state as far as it trained.
void start_from(TrainOutput& out, const TrainOutput& from);

}  // namespace tn::train_detail
