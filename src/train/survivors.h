// Successive halving's survivors as a swarm of their own: after a rung the members still
// training continue packed together, so a vector block holds only members that train and the
// run's time follows the members left, not the swarm it started with. Member k trains
// exactly as it would in the whole swarm: its optimizer values, its batches (member sets
// made explicit, data/member_sets.h) and its state carry over. train/train_pass.cpp drives it.
#pragma once
#include <vector>

#include "config/config.h"
#include "train/train_output.h"

namespace tn {

// Local members still training: neither stopped nor diverged.
std::vector<int> training_members(const TrainOutput& out, int S);

// Whether continuing `members` (local indices) packed takes fewer member blocks of `block`
// than the S-member swarm with the others masked, and whether it may: halving search, no
// dropout (its masks follow the member index), not group_by.
bool survivors_pay(const Config& cfg, const std::vector<int>& members, int S, int block);

// The state of `members` of `full` (histories [S, full.epochs], trained `done` epochs) as the
// survivors' swarm's resume point: parameters, optimizer state, histories [M, done], the
// search's progress; `partial` (may be null or empty): an epoch interrupted between steps.
TrainOutput survivors_state(const TrainOutput& full, const std::vector<int>& members, int done,
                            const PartialEpoch* partial);

// `full` (histories [S, full.epochs]) with the survivors' swarm `part` put back at `members`:
// their parameters (and optimizer state, when `part` has it), histories, divergence, stops,
// rungs and predictions; epochs, interruption and the interrupted epoch's position are
// part's. The others keep theirs, which ended at their rung.
TrainOutput merge_survivors(const TrainOutput& full, const TrainOutput& part, const std::vector<int>& members);

}  // namespace tn
