// The entry points of training: batch and step counts, and train_swarm (plan, then chunks).
#include "train/trainer.h"

#include <algorithm>

namespace tn {

int epoch_batch(const Config& cfg, const MemberSets& sets) {
  return std::min(cfg.train.batch_size, std::max(1, static_cast<int>(sets.max_size())));
}

long epoch_steps(const Config& cfg, const MemberSets& sets) {
  const long batch = epoch_batch(cfg, sets);
  return (static_cast<long>(sets.max_size()) + batch - 1) / batch;
}

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, Backend& be,
                        const ProgressFn& progress) {
  return train_swarm(cfg, data, make_member_sets(cfg, data), be, progress);
}

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                        const ProgressFn& progress) {
  return train_swarm_in_chunks(cfg, data, sets, be, progress, plan_training(cfg, data, sets, be).chunk);
}

}  // namespace tn
