// A trained member, or the whole ensemble, as an ONNX model (opset 17) that onnxruntime and
// other ONNX runtimes evaluate: the stored input normalization, the recurrent layers as ONNX's
// own LSTM/GRU ops (gates reordered from ours), the dense head, the output activation and, for
// the ensemble, the combined prediction and per-sample uncertainty of `turbanet predict`.
// Inputs, outputs and their names: docs/export.md.
#pragma once
#include <string>
#include <vector>

#include "run/stored_swarm.h"

namespace tn {

// The .onnx bytes of local member `s` alone:
//   input  "input"  [N, F] raw features (sequence runs: [N, T, step_features])
//   output "output" [N, O]  the member's outputs as predict's /members (probabilities for
//                           cross_entropy, p(class 1) for bce, values for regression, in
//                           original units with data.normalize_target)
//          "logits" [N, O]  before softmax/sigmoid
//          "label"  [N]     int64, classification: the predicted class
//          "output_original" [N, O]  sequence runs with a normalized target: in original units
std::string onnx_member_model(const StoredSwarm& run, int s);

// The .onnx bytes of `members` (local indices) run together, the dense layers as one batched
// MatMul over stacked [S, in, out] weights:
//   input  "input"   as above
//   output "members" [S, N, O], "ensemble" [N, K] (mean probability; regression [N, O], the mean),
//          "ensemble_std" [N, O]; classification also "label" [N] int64, "entropy",
//          "mutual_information", "disagreement" [N].
// With `weights` [S] (an ensemble selection) every mean over the members is weighted by them,
// as predict's combine() weights it; the graph then holds them as the constant member_weight.
std::string onnx_ensemble_model(const StoredSwarm& run, const std::vector<int>& members,
                                const std::vector<double>& weights = {});

}  // namespace tn
