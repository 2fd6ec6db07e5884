// Swarms whose members differ in architecture (model.hidden, model.layers.<i>.units,
// .activation, .type per member): the members are grouped by architecture into sub-swarms,
// each trained by the ordinary vectorized trainer, all of them scheduled on the backend's
// workers together. Member k trains exactly as it would alone with its architecture written
// as plain numbers: its initial parameters, batches and hyperparameters follow its global index.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"
#include "backend/backend.h"
#include "train/memory_plan.h"
#include "train/train_output.h"

namespace tn {

struct ArchitectureGroup {
  std::string name;          // architecture_text(model)
  ModelConfig model;         // the members' model, without per-member keys
  std::vector<int> members;  // local member indices (0 .. S-1), increasing
};

// The swarm's members grouped by architecture, groups in the order of their first member.
std::vector<ArchitectureGroup> architecture_groups(const Config& cfg);

// The configuration of one group's sub-swarm: its model written out, members numbered from 0,
// each member's other per-member values as an explicit list (no grid).
Config architecture_config(const Config& cfg, const ArchitectureGroup& g);

// Plans every group's memory on its own (plan_training; ConfigError or BackendError naming
// the architecture when one does not fit). The plan is the whole swarm with `chunks` the most
// any group is split into (more than 1: no checkpoints); each group is chunked when it trains.
ChunkPlan plan_architectures(const Config& cfg, const PreparedData& data, const MemberSets& sets, const Backend& be,
                             bool with_run_file);

// Trains every group (members [cfg.swarm.first_member, + cfg.swarm.size) of a per-member
// architecture config) and returns the whole swarm's result with one
// TrainOutput::architectures entry per group. On the CPU with at least as many groups as
// threads, each thread trains whole groups, the most costly first, so no group waits for
// another's synchronization; otherwise the groups train one after another on all workers.
// Each group's memory is planned on its own (chunks on a device). With `control`: stopping
// stops every group where it is; checkpoints hold every group's latest state, each at its own
// epoch (TrainOutput::architectures[a].epochs), written whenever a group reaches a multiple of
// checkpoint_every and once more at the end or interruption; a resume state of that form
// continues every group from its own epoch. Warm starts are refused before (config).
TrainOutput train_architectures(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                                const ProgressFn& progress, const TrainControl& control);

}  // namespace tn
