// The swarm model a configuration describes: its shape, checked against the data and the
// loss, and each member's initial parameters (a pure function of seed and member).
#pragma once
#include <cstdint>
#include <vector>

#include "config/config.h"
#include "swarm/shape.h"

namespace tn {

// Builds the shape from the config and the data: `features` per sample, or for sequence data
// (seq_len > 0) windows of seq_len steps of step_features. Throws ConfigError when the output
// layer does not fit the loss and data (e.g. 3 classes but 2 output units) or recurrent layers
// get no sequence data.
ModelShape make_model_shape(const ModelConfig& model, const LossConfig& loss, int features,
                            int num_classes, int targets, int seq_len = 0, int step_features = 0);

struct PreparedData;
// The same from a whole config and its prepared data (what training and sweeps use).
ModelShape make_model_shape(const Config& cfg, const PreparedData& data);

// Initial parameters for members [first_member, first_member + S) in `layout` order.
// Dense: He normal (std √(2/in)) for relu-like activations, Glorot uniform (limit
// √(6/(in+out))) otherwise. Recurrent, per gate block: Wx Glorot uniform √(6/(in+H)), Wh
// uniform √(6/(2H)) (= Glorot of an H×H block). Biases zero, except the LSTM forget gate's
// (forget_bias). Member k's values depend only on (seed, k).
// `scale` (empty: all 1) multiplies member s's weights (model.init_scale, per member).
std::vector<float> init_params(const ModelShape& shape, const ParamLayout& layout,
                               std::uint64_t seed, int first_member, const std::vector<float>& scale = {});
// The same for the members `members` (global indices, one per layout member), in any order:
// a sub-swarm of members that share an architecture (train/architectures.h).
std::vector<float> init_params(const ModelShape& shape, const ParamLayout& layout, std::uint64_t seed,
                               const std::vector<int>& members, const std::vector<float>& scale = {});

}  // namespace tn
