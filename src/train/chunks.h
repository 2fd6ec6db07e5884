// Chunked training of a swarm of one architecture: members in consecutive chunks, one after
// another on the same backend, merged into the whole swarm's result. Internal to train/.
#pragma once
#include "backend/backend.h"
#include "train/train_output.h"

namespace tn::train_detail {

// train_swarm_in_chunks (train/train_swarm.h) for a swarm of one architecture: chunks of at
// most `chunk` members (<= 0 or >= swarm.size: one pass). BackendError for search in chunks.
TrainOutput train_in_chunks(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                            const ProgressFn& progress, int chunk, const TrainControl& control);

}  // namespace tn::train_detail
