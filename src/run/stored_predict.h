// A stored swarm's forward pass over its inputs (run/stored_inputs.h) for eval, predict and
// forecasts: every member on every sample, or, for group_by runs, each member on its own
// group's samples; outputs in the targets' original units.
#pragma once
#include "eval/combine.h"
#include "eval/per_group.h"
#include "run/stored_inputs.h"
#include "run/stored_swarm.h"

namespace tn {

// Every member's outputs and logits on `in`, on the device `device: auto` picks (a GPU when
// the build has the CUDA backend and one is present, else the CPU with `threads` threads).
SwarmPredictions run_swarm(const StoredSwarm& run, const Inputs& in, int threads);

// Throws UsageError when `how` does not apply to the run (vote needs a classification run).
void check_combine(const StoredSwarm& run, Combine how);

// group_by runs: each member's outputs on the samples of its own group (in.group), on the
// device run_swarm picks; in original units too when in.units is not the identity.
GroupPredictions run_per_group(const StoredSwarm& run, const Inputs& in, int threads);

}  // namespace tn
