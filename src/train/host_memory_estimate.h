// The host memory training takes on the CPU, and the plan of one architecture's swarm: how
// many members train at once (train/train_swarm.h plan_training dispatches here).
#pragma once
#include "backend/backend.h"
#include "train/memory_plan.h"
#include "train/train_output.h"

namespace tn {

// The host memory training `cfg` on `be` (the CPU) takes, by phase (memory_plan.h): data,
// parameters, optimizer state, worker buffers, histories and predictions; with
// `with_run_file` also the final evaluation and the run file's copies.
HostMemoryEstimate estimate_host_memory(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                                        const Backend& be, bool with_run_file);
// Before the data are made: refuses (ConfigError) a built-in generator's data (data.source
// spirals, moons, sine, random_walk and its sequence windows) that alone would not fit in
// the memory available. Files are read first and checked by plan_training.
void check_generated_data_memory(const Config& cfg);

namespace train_detail {
// plan_training for a swarm of one architecture.
ChunkPlan plan_swarm(const Config& cfg, const PreparedData& data, const MemberSets& sets, const Backend& be,
                     bool with_run_file);
}  // namespace train_detail

}  // namespace tn
