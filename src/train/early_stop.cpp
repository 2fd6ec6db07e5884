// Per-member early stopping rule (see train/early_stop.h).
#include "train/early_stop.h"

#include <cmath>
#include <limits>

namespace tn {

double early_stop_initial_best(const EarlyStoppingConfig& es) {
  const double inf = std::numeric_limits<double>::infinity();
  return es.maximize() ? -inf : inf;
}

EarlyStopEvent early_stop_update(const EarlyStoppingConfig& es, double value, int epoch, double& best,
                                 int& best_epoch, int& stopped_epoch) {
  const bool improved = std::isfinite(value) && (es.maximize() ? value > best + es.min_delta
                                                               : value < best - es.min_delta);
  if (improved) {
    best = value;
    best_epoch = epoch;
    return EarlyStopEvent::Improved;
  }
  if (epoch - best_epoch >= es.patience) {
    stopped_epoch = epoch;
    return EarlyStopEvent::Stopped;
  }
  return EarlyStopEvent::None;
}

}  // namespace tn
