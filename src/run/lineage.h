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

// Members still training after each rung of a halving run of S members: [R + 1] from S.
std::vector<int> halving_counts(const SearchRecord& r, int S);

}  // namespace tn
