// Queries of a TrainOutput and of an epoch's batches (train/train_output.h).
#include "train/train_output.h"

#include <algorithm>
#include <stdexcept>

namespace tn {

// The [S, epochs] history of a ranking metric (ranking_metrics()).
const std::vector<float>& metric_history(const TrainOutput& out, const std::string& metric) {
  return metric == "val_loss"       ? out.val_loss
         : metric == "val_accuracy" ? out.val_acc
         : metric == "train_loss"   ? out.train_loss
                                    : out.train_acc;
}

std::vector<double> epoch_metric(const TrainOutput& out, const std::string& metric, int S, int e) {
  const std::vector<float>& h = metric_history(out, metric);
  if (h.empty()) throw std::logic_error("search: no " + metric + " history (the config check lets none through)");
  std::vector<double> v(static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s) v[s] = h[static_cast<std::size_t>(s) * out.epochs + e];
  return v;
}

int epoch_batch(const Config& cfg, const MemberSets& sets) {
  return std::min(cfg.train.batch_size, std::max(1, static_cast<int>(sets.max_size())));
}

long epoch_steps(const Config& cfg, const MemberSets& sets) {
  const long batch = epoch_batch(cfg, sets);
  return (static_cast<long>(sets.max_size()) + batch - 1) / batch;
}

}  // namespace tn
