// Halving's survivors continued packed: after a rung the members still training go on as a
// swarm of their own (train/survivors.h) while the stopped ones keep their state. Internal to
// train/; train/train_pass.cpp calls it with itself as the pass that trains the survivors.
#pragma once
#include <functional>
#include <memory>

#include "backend/backend.h"
#include "train/train_output.h"

namespace tn::train_detail {

class Loop;  // train/loop.h

// How the survivors' swarm trains (train_pass).
using PassFn = std::function<TrainOutput(const Config&, const PreparedData&, const MemberSets&, Backend&,
                                         const ProgressFn&, const TrainControl&)>;

// Halving: after `done` epochs (`seconds` of training; `partial`, an epoch a resume is in the
// middle of, or null) the members still training continue as a swarm of their own
// (train/survivors.h), the others keeping what they had at their rung. `loop` is released
// first, so the survivors' swarm has its memory. Checkpoints and progress speak of the whole
// swarm; the result is the whole swarm's.
TrainOutput continue_packed(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                            const ProgressFn& progress, const TrainControl& control, TrainOutput& out,
                            std::unique_ptr<Loop> loop, int done, double seconds, const PartialEpoch* partial,
                            const PassFn& pass);

}  // namespace tn::train_detail
