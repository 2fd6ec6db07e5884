// The one place that decides how a swarm trains: members of several architectures as one
// sub-swarm per architecture (train/architectures.h), else in chunks when the device does not
// hold them all (train/chunks.h), else in one pass (train/pass.h).
#pragma once
#include "backend/backend.h"
#include "train/memory_plan.h"
#include "train/train_output.h"

namespace tn {

// Trains members [cfg.swarm.first_member, +cfg.swarm.size) on `data` with `be`, each on
// its set from `sets` (make_member_sets; the first overload builds them). On a device with
// its own memory the swarm is planned (backend/memory_plan.h) and trained in chunks when it
// does not fit at once; BackendError when not even one member fits.
TrainOutput train_swarm(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                        const ProgressFn& progress);
TrainOutput train_swarm(const Config& cfg, const PreparedData& data, Backend& be,
                        const ProgressFn& progress);
// How many members `be` can train at once. On a device with its own memory, the members that
// fit (BackendError when not even one does). On the CPU the whole swarm, after checking that
// it fits in the memory available (estimate_host_memory against available_memory()), with
// the final evaluation and the run file when `with_run_file` (turbanet train): ConfigError,
// before any work, when it does not.
ChunkPlan plan_training(const Config& cfg, const PreparedData& data, const MemberSets& sets, const Backend& be,
                        bool with_run_file = false);
// Trains members in consecutive chunks of at most `chunk` (≤ 0: all at once), one after
// another on the same backend, and merges the results: what train_swarm does when the
// device memory planner splits the swarm. Each member's result does not depend on the chunk.
// `control` needs the whole swarm in one pass (chunk <= 0 or >= swarm.size), except for its
// `init`: std::logic_error otherwise.
TrainOutput train_swarm_in_chunks(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                                  Backend& be, const ProgressFn& progress, int chunk,
                                  const TrainControl& control = {});

}  // namespace tn
