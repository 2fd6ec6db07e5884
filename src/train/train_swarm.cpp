// The dispatcher: several architectures train as groups, a swarm too large for the device in
// chunks, any other in one pass (train/train_swarm.h).
#include "train/train_swarm.h"

#include "train/architectures.h"
#include "train/chunks.h"
#include "train/host_memory_estimate.h"

namespace tn {

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, Backend& be,
                        const ProgressFn& progress) {
  return train_swarm(cfg, data, make_member_sets(cfg, data), be, progress);
}

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                        const ProgressFn& progress) {
  return train_swarm_in_chunks(cfg, data, sets, be, progress, plan_training(cfg, data, sets, be).chunk);
}

ChunkPlan plan_training(const Config& cfg, const PreparedData& data, const MemberSets& sets, const Backend& be,
                        bool with_run_file) {
  if (per_member_architecture(cfg)) return plan_architectures(cfg, data, sets, be, with_run_file);
  return train_detail::plan_swarm(cfg, data, sets, be, with_run_file);
}

TrainOutput train_swarm_in_chunks(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                                  const ProgressFn& progress, int chunk, const TrainControl& control) {
  if (per_member_architecture(cfg)) return train_architectures(cfg, data, sets, be, progress, control);
  return train_detail::train_in_chunks(cfg, data, sets, be, progress, chunk, control);
}

}  // namespace tn
