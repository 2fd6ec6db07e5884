// The forward pass of a stored swarm: the trained parameters of all members run on inputs
// through the same backend ops (model_forward, output_transform) the trainer uses.
#pragma once
#include <vector>

#include "backend/backend.h"
#include "eval/combine.h"
#include "eval/per_group.h"
#include "swarm/shape.h"

namespace tn {

// Logits and outputs (softmax for cross_entropy, sigmoid for bce, else the logits) of the
// S members whose parameters `params` are in ParamLayout(shape, S) order, on X [N, F],
// in batches of at most `batch` rows (use the training batch size to reproduce the
// trainer's predictions bit for bit).
SwarmPredictions predict_swarm(Backend& be, const ModelShape& shape, LossType loss,
                               const std::vector<float>& params, int S,
                               const std::vector<float>& X, int N, int batch);

// Members of one architecture in a swarm of several: its shape, its members' parameters
// (ParamLayout(*shape, members.size()) order) and their local indices in the swarm.
struct SwarmPart {
  const ModelShape* shape = nullptr;
  const std::vector<float>* params = nullptr;
  std::vector<int> members;
};

// predict_swarm for a swarm of S members with O outputs made of `parts`: each part runs as a
// swarm of its own and its outputs are put at its members' places.
SwarmPredictions predict_parts(Backend& be, LossType loss, const std::vector<SwarmPart>& parts, int S, int O,
                               const std::vector<float>& X, int N, int batch);

// The outputs of group_by members on their own samples only: sample i is run through local
// member member[i] alone (member[i] outside [0, S): no member, output left 0). Each member's
// samples go through the same ops in batches of at most `batch` of its own rows.
GroupPredictions predict_per_group(Backend& be, const ModelShape& shape, LossType loss,
                                 const std::vector<float>& params, int S, const std::vector<float>& X,
                                 int N, int batch, const std::vector<int>& member);

}  // namespace tn
