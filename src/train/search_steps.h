// Early stopping and search applied to a pass's state between epochs: which members stop,
// which take over another's state (train/search.h and train/early_stop.h decide; this applies
// it to the TrainOutput and the Loop). Internal to train/.
#pragma once
#include <vector>

#include "train/train_output.h"

namespace tn::train_detail {

class Loop;  // train/loop.h

// After epoch e (0-based, the last one run): early stopping for every member still training
// (train/early_stop.h); returns how many stopped.
int early_stop_epoch(const Config& cfg, TrainOutput& out, Loop& loop, int e);
// Whether a rung or round of `search` falls after epoch `done` (1-based count of epochs run).
bool search_after(const SearchConfig& sc, int done, int E);
// The next epoch count after `done` at which search acts, or E.
int next_search_epoch(const SearchConfig& sc, int done, int E);
// The search state at the start: nothing stopped; PBT's values of the perturbed keys.
void start_search(const Config& cfg, TrainOutput& out);
// Successive halving's rung after epoch count `done`, on `out` (histories [S, out.epochs],
// S = cfg.swarm.size): records the rung in search_epochs and, of the members still training
// (training_members), stops all but the best (stopped_epoch = done, search_rung = the rung's
// number). Returns the members it stopped. The one cut of a single- and a mixed-architecture swarm.
std::vector<int> halving_round(const Config& cfg, TrainOutput& out, int done);
// After epoch count `done` (a rung or round): halving stops the worse members still
// training; PBT's bottom members take over the state of top ones and explore. Returns how
// many members stopped.
int search_step(const Config& cfg, TrainOutput& out, Loop& loop, int done);
// Resuming a search: the perturbed values in effect when the checkpoint was written.
void resume_search(const Config& cfg, const TrainOutput& out, Loop& loop);

}  // namespace tn::train_detail
