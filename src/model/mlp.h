// A swarm of multilayer perceptrons: layer shapes, the member-major parameter layout and
// initialization. Parameters of tensor t live as one contiguous [S, size_t] array.
#pragma once
#include <cstdint>
#include <vector>

#include "config/config.h"

namespace tn {

struct DenseLayer {
  int in = 0, out = 0;
  Activation act = Activation::Identity;
  float slope = 0.01f;
  LayerConfig::Init init = LayerConfig::Init::Auto;
};

// Tensor order: W_0, b_0, W_1, b_1, ... (W_l is [in, out] with y = x·W + b).
struct MlpShape {
  std::vector<DenseLayer> layers;
  int inputs() const { return layers.front().in; }
  int outputs() const { return layers.back().out; }
  int max_width() const;
  int tensors() const { return 2 * static_cast<int>(layers.size()); }
  std::int64_t tensor_size(int t) const;  // floats per member
  std::int64_t params_per_member() const;
};

// Builds the shape from the config and the data's feature count. Throws ConfigError when
// the output layer does not fit the loss and data (e.g. 3 classes but 2 output units).
MlpShape make_mlp_shape(const ModelConfig& model, const LossConfig& loss, int features,
                        int num_classes, int targets);

// Swarm arrays laid out tensor by tensor, each [S, tensor_size]: one instance for the
// parameters, the gradients and each optimizer state slot.
struct ParamLayout {
  int S = 0;
  std::vector<std::int64_t> size;    // per tensor, floats per member
  std::vector<std::int64_t> offset;  // per tensor, start of its [S, size] array
  std::int64_t total = 0;            // floats in the whole swarm array
  ParamLayout() = default;
  ParamLayout(const MlpShape& shape, int S);
  std::int64_t at(int tensor, int member) const { return offset[tensor] + member * size[tensor]; }
};

// A block's view of swarm arrays: member m0's slice of each tensor (stride = tensor size).
struct BlockParams {
  std::vector<float*> t;  // per tensor: base + layout.at(tensor, m0)
  const ParamLayout* layout = nullptr;
  BlockParams(float* base, const ParamLayout& layout, int m0);
  std::int64_t stride(int tensor) const { return layout->size[tensor]; }
};

// Initial parameters for members [first_member, first_member + S) in `layout` order:
// He normal (std √(2/in)) for relu-like activations, Glorot uniform (limit √(6/(in+out)))
// otherwise, biases zero. Member k's values depend only on (seed, k).
// `scale` (empty: all 1) multiplies member s's weights (model.init_scale, per member).
std::vector<float> init_params(const MlpShape& shape, const ParamLayout& layout,
                               std::uint64_t seed, int first_member, const std::vector<float>& scale = {});

}  // namespace tn
