// One pass: every member of a config trained at once on one backend (train/loop.h), with
// early stopping, search and halving's packed survivors. Internal to train/.
#pragma once
#include "backend/backend.h"
#include "train/train_output.h"

namespace tn::train_detail {

// Trains all members of `cfg` at once (no chunks, one architecture) under `control`.
TrainOutput train_pass(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                       const ProgressFn& progress, const TrainControl& control);

}  // namespace tn::train_detail
