// Running a trained swarm forward on inputs: the stored parameters of all members through
// the same backend ops (model_forward, output_transform) the trainer uses.
#pragma once
#include <vector>

#include "backend/backend.h"
#include "eval/combine.h"
#include "model/shape.h"

namespace tn {

// Logits and outputs (softmax for cross_entropy, sigmoid for bce, else the logits) of the
// S members whose parameters `params` are in ParamLayout(shape, S) order, on X [N, F],
// in batches of at most `batch` rows (use the training batch size to reproduce the
// trainer's predictions bit for bit).
SwarmPredictions predict_swarm(Backend& be, const ModelShape& shape, LossType loss,
                               const std::vector<float>& params, int S,
                               const std::vector<float>& X, int N, int batch);

}  // namespace tn
