// The loss weights a run trains with: cross_entropy's class weights (as given, or `balanced`
// fitted on the training split) and bce's pos_weight, resolved to one value per output.
#pragma once
#include <vector>

#include "data/prepare.h"
#include "math/losses.h"

namespace tn {

// [O] weights the loss ops read (LossConfig::weights), or empty when the loss is unweighted.
// balanced: w_c = n / (O · count_c) over the training split's labels y [n] (scikit-learn's
// compute_class_weight('balanced', classes=range(O), y)); a class with no training sample
// is a DataError, as in scikit-learn. pos_weight given once applies to every output.
std::vector<float> resolve_loss_weights(const LossConfig& loss, const SplitData& train, int outputs);

}  // namespace tn
