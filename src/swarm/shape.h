// What describes a swarm, below both the backends and the model code: a model's shape
// (optional recurrent layers over sequence inputs, then a dense head), the member-major
// parameter layout and a block's views of it. Parameters of tensor t live as one contiguous
// [S, tensor_size(t)] array. Knows no configs, data or devices.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "math/activations.h"

namespace tn {

// How a dense layer's weights are drawn: auto is He for relu-like activations, else Glorot.
enum class InitRule { Auto, He, Glorot };

struct DenseLayer {
  int in = 0, out = 0;
  Activation act = Activation::Identity;
  float slope = 0.01f;
  InitRule init = InitRule::Auto;
  float dropout = 0.0f;  // inverted dropout rate on the layer's output, at training only
};

enum class CellType { Lstm, Gru };

// A recurrent layer over [T, in] sequences (math/recurrent_cells.h has the equations). Tensors:
// LSTM Wx [in, 4H], Wh [H, 4H], b [4H]; GRU Wx [in, 3H], Wh [H, 3H], bx [3H], bh [3H].
struct RecurrentLayer {
  CellType cell = CellType::Lstm;
  int in = 0, units = 0;
  bool return_sequences = false;  // every step's h (feeds the next recurrent layer) or the last
  float forget_bias = 1.0f;       // LSTM: initial bias of the forget gate
  int gates() const { return cell == CellType::Lstm ? 4 : 3; }
  int tensors() const { return cell == CellType::Lstm ? 3 : 4; }
};

// Tensor order: the recurrent layers' tensors (in layer order), then W_0, b_0, W_1, b_1, ...
// of the dense head (W_l is [in, out] with y = x·W + b).
struct ModelShape {
  int seq_len = 0;        // T of sequence inputs (0: plain feature vectors)
  int step_features = 0;  // features per time step
  std::vector<RecurrentLayer> recurrent;
  std::vector<DenseLayer> layers;  // the dense head
  // Values per input sample: features, or seq_len · step_features for sequences.
  int inputs() const { return recurrent.empty() ? layers.front().in : seq_len * step_features; }
  int outputs() const { return layers.back().out; }
  int max_width() const;  // widest dense-head activation (its input included)
  int recurrent_tensors() const;
  int recurrent_tensor(int r) const;  // first tensor of recurrent layer r
  int dense_tensor(int li) const { return recurrent_tensors() + 2 * li; }
  int tensors() const { return recurrent_tensors() + 2 * static_cast<int>(layers.size()); }
  int num_layers() const { return static_cast<int>(recurrent.size() + layers.size()); }
  std::int64_t tensor_size(int t) const;  // floats per member (saturating: math/saturate.h)
  std::vector<std::int64_t> tensor_dims(int t) const;  // {rows, cols} or {n}
  std::string tensor_name(int t) const;  // W, b (dense); Wx, Wh, b (lstm); Wx, Wh, bx, bh (gru)
  int layer_of(int t) const;             // model layer (recurrent first) that owns tensor t
  std::int64_t params_per_member() const;  // saturating
};

// Swarm arrays laid out tensor by tensor, each [S, tensor_size]: one instance for the
// parameters, the gradients and each optimizer state slot.
struct ParamLayout {
  int S = 0;
  std::vector<std::int64_t> size;    // per tensor, floats per member
  std::vector<std::int64_t> offset;  // per tensor, start of its [S, size] array
  std::int64_t total = 0;            // floats in the whole swarm array (saturating)
  ParamLayout() = default;
  ParamLayout(const ModelShape& shape, int S);
  std::int64_t at(int tensor, int member) const { return offset[tensor] + member * size[tensor]; }
};

// A block's view of swarm arrays: member m0's slice of each tensor (stride = tensor size).
struct BlockParams {
  std::vector<float*> t;  // per tensor: base + layout.at(tensor, m0)
  const ParamLayout* layout = nullptr;
  BlockParams(float* base, const ParamLayout& layout, int m0);
  std::int64_t stride(int tensor) const { return layout->size[tensor]; }
};

}  // namespace tn
