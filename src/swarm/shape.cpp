// Model shapes: tensor counts, sizes and names; the parameter layout and block views.
#include "swarm/shape.h"

#include <algorithm>

#include "math/saturate.h"

namespace tn {

int ModelShape::max_width() const {
  int w = layers.front().in;
  for (const auto& l : layers) w = std::max(w, l.out);
  return recurrent.empty() ? std::max(w, inputs()) : w;
}

int ModelShape::recurrent_tensors() const {
  int n = 0;
  for (const auto& r : recurrent) n += r.tensors();
  return n;
}

int ModelShape::recurrent_tensor(int r) const {
  int n = 0;
  for (int i = 0; i < r; ++i) n += recurrent[i].tensors();
  return n;
}

int ModelShape::layer_of(int t) const {
  for (int r = 0; r < static_cast<int>(recurrent.size()); ++r) {
    if (t < recurrent[r].tensors()) return r;
    t -= recurrent[r].tensors();
  }
  return static_cast<int>(recurrent.size()) + t / 2;
}

std::vector<std::int64_t> ModelShape::tensor_dims(int t) const {
  const int li = layer_of(t);
  if (li < static_cast<int>(recurrent.size())) {
    const RecurrentLayer& r = recurrent[li];
    const int k = t - recurrent_tensor(li);
    const std::int64_t G = static_cast<std::int64_t>(r.gates()) * r.units;
    if (k == 0) return {r.in, G};
    if (k == 1) return {r.units, G};
    return {G};
  }
  const DenseLayer& l = layers[li - recurrent.size()];
  return (t - recurrent_tensors()) % 2 == 0 ? std::vector<std::int64_t>{l.in, l.out} : std::vector<std::int64_t>{l.out};
}

std::string ModelShape::tensor_name(int t) const {
  const int li = layer_of(t);
  if (li >= static_cast<int>(recurrent.size())) return (t - recurrent_tensors()) % 2 == 0 ? "W" : "b";
  static const char* lstm[] = {"Wx", "Wh", "b"};
  static const char* gru[] = {"Wx", "Wh", "bx", "bh"};
  const int k = t - recurrent_tensor(li);
  return recurrent[li].cell == CellType::Lstm ? lstm[k] : gru[k];
}

// As the product of tensor_dims(t), without building the vector: the lane kernel asks for
// sizes several times per lane group and step.
std::int64_t ModelShape::tensor_size(int t) const {
  const int li = layer_of(t);
  if (li < static_cast<int>(recurrent.size())) {
    const RecurrentLayer& r = recurrent[li];
    const int k = t - recurrent_tensor(li);
    const std::int64_t G = static_cast<std::int64_t>(r.gates()) * r.units;
    return k == 0 ? sat_mul(r.in, G) : k == 1 ? sat_mul(r.units, G) : G;
  }
  const DenseLayer& l = layers[li - recurrent.size()];
  return (t - recurrent_tensors()) % 2 == 0 ? static_cast<std::int64_t>(l.in) * l.out : l.out;
}

std::int64_t ModelShape::params_per_member() const {
  std::int64_t n = 0;
  for (int t = 0; t < tensors(); ++t) n = sat_add(n, tensor_size(t));
  return n;
}

ParamLayout::ParamLayout(const ModelShape& shape, int S_) : S(S_) {
  for (int t = 0; t < shape.tensors(); ++t) {
    size.push_back(shape.tensor_size(t));
    offset.push_back(total);
    total = sat_add(total, sat_mul(S, size.back()));
  }
}

BlockParams::BlockParams(float* base, const ParamLayout& lay, int m0) : layout(&lay) {
  for (std::size_t i = 0; i < lay.size.size(); ++i) t.push_back(base + lay.at(static_cast<int>(i), m0));
}

}  // namespace tn
