// The per-member training state of a TrainOutput, written once: its histories [S, epochs] and
// per-member arrays [S] (divergence, stops, best epochs, halving rungs), and how a sub-swarm's
// state is taken from the whole swarm's (gather) and put back (scatter). Halving's survivors,
// per-member architectures and chunks all move members with these. Internal to train/.
#pragma once
#include <vector>

#include "config/config.h"
#include "train/train_output.h"

namespace tn::train_detail {

// The four [S, epochs] histories of a TrainOutput.
inline constexpr std::vector<float> TrainOutput::*kHistories[] = {&TrainOutput::train_loss, &TrainOutput::val_loss,
                                                                   &TrainOutput::train_acc, &TrainOutput::val_acc};

// A fresh state of S members: none diverged and, with early stopping, none stopped, no best
// epoch yet (best_value the rule's starting value).
void init_member_state(const Config& cfg, int S, TrainOutput& t);

// `whole` sized for S members and E epochs, to take sub-swarms `parts` (scatter_members):
// histories [S, E] of NaN where a part has them (train_loss always), none diverged, and where
// a part has them, none stopped and no best epoch (best_value 0).
void size_member_state(TrainOutput& whole, int S, int E, const std::vector<const TrainOutput*>& parts);

// Members `members` (indices into `whole`, in the sub-swarm's order) of `whole` (histories
// [S, whole.epochs]): histories [M, keep] (the first `keep` epochs), their entries of every
// per-member array (empty stays empty), epochs = keep and steps_per_epoch. Parameters,
// optimizer state and the interrupted epoch are left to the caller (their layout differs).
TrainOutput gather_members(const TrainOutput& whole, const std::vector<int>& members, int keep);

// The sub-swarm `part` (histories [M, part.epochs]) put back at `members` of `whole`
// (histories [S, whole.epochs], sized already): its history rows (the first min(epochs) columns),
// per-member arrays (where `whole` has them) and prediction rows [N, outputs] each.
void scatter_members(TrainOutput& whole, const TrainOutput& part, const std::vector<int>& members);

}  // namespace tn::train_detail
