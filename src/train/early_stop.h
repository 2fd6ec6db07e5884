// Per-member early stopping: the rule that decides, after each epoch, whether a member's
// metric improved (and that epoch becomes its best) or whether it stops training.
#pragma once
#include "config/config.h"

namespace tn {

enum class EarlyStopEvent { None, Improved, Stopped };

// After epoch `epoch` (1-based) with metric `value`: an improvement is value < best −
// min_delta (losses) or value > best + min_delta (accuracies); a non-finite value never
// improves. Improved sets best and best_epoch; after `patience` epochs without one since
// best_epoch (0 before the first), the member stops: stopped_epoch = epoch.
EarlyStopEvent early_stop_update(const EarlyStoppingConfig& es, double value, int epoch, double& best,
                                 int& best_epoch, int& stopped_epoch);

// The value best starts from: +inf for losses, -inf for accuracies.
double early_stop_initial_best(const EarlyStoppingConfig& es);

}  // namespace tn
