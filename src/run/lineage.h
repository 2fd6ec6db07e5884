// What a search inside the swarm did to one member, read from a run file's /search: PBT's
// lineage (whose state it carried in each stretch of epochs, with which hyperparameters) and
// successive halving's rungs.
#pragma once
#include <string>
#include <vector>

#include "io/run_file.h"

namespace tn {

// One stretch of epochs [first_epoch, last_epoch] (1-based) of a PBT member's history: the
// member whose state it was then, and that member's perturbed values (SearchRecord::keys order).
struct LineageStep {
  int member = 0;
  int first_epoch = 0, last_epoch = 0;
  std::vector<double> values;
};

// The lineage of member `member` (local index) of a PBT run trained `epochs` epochs, from
// the first stretch to the last: walks /search/source back from the last round.
std::vector<LineageStep> pbt_lineage(const SearchRecord& r, int member, int epochs);

// Members training at the start and after each rung of a halving run: [R + 1], the first the
// swarm size. `rungs` are the rung epochs, `rung` [S] each member's rung (0: none) and
// `diverged_epoch` [S] (-1: never; may be empty): a member that diverged by a rung's epoch is
// not training after it.
std::vector<int> halving_counts(const std::vector<int>& rungs, const std::vector<int>& rung,
                                const std::vector<int>& diverged_epoch);

// The members halving kept to the end (rung 0) that did not diverge (`diverged_epoch` may be
// empty); empty when the rungs stopped none, as then the whole swarm's ensemble is theirs.
std::vector<int> halving_kept(const std::vector<int>& rung, const std::vector<int>& diverged_epoch);

}  // namespace tn
