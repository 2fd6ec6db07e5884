// MLP shapes, layout and initialization.
#include "model/mlp.h"

#include <algorithm>
#include <cmath>

#include "math/rng.h"

namespace tn {

int MlpShape::max_width() const {
  int w = inputs();
  for (const auto& l : layers) w = std::max(w, l.out);
  return w;
}

std::int64_t MlpShape::tensor_size(int t) const {
  const DenseLayer& l = layers[t / 2];
  return t % 2 == 0 ? static_cast<std::int64_t>(l.in) * l.out : l.out;
}

std::int64_t MlpShape::params_per_member() const {
  std::int64_t n = 0;
  for (int t = 0; t < tensors(); ++t) n += tensor_size(t);
  return n;
}

MlpShape make_mlp_shape(const ModelConfig& model, const LossConfig& loss, int features,
                        int num_classes, int targets) {
  MlpShape shape;
  int in = features;
  for (const auto& lc : model.layers) {
    shape.layers.push_back({in, lc.units, lc.activation, lc.leaky_slope, lc.init});
    in = lc.units;
  }
  const int out = shape.outputs();
  const std::string last = "model.layers[" + std::to_string(model.layers.size() - 1) + "].units";
  if (loss.type == LossType::CrossEntropy && out != num_classes)
    throw ConfigError(last + ": the data has " + std::to_string(num_classes) +
                      " classes, so cross_entropy needs " + std::to_string(num_classes) +
                      " output units, not " + std::to_string(out));
  if (loss.type == LossType::Bce && (num_classes != 2 || out != 1))
    throw ConfigError(last + ": bce needs 1 output unit and two classes (the data has " +
                      std::to_string(num_classes) + " classes and the model " +
                      std::to_string(out) + " outputs); use cross_entropy for more classes");
  if (!is_classification(loss.type) && out != targets)
    throw ConfigError(last + ": the data has " + std::to_string(targets) +
                      " target value(s) per sample, so the last layer needs that many units, not " +
                      std::to_string(out));
  return shape;
}

ParamLayout::ParamLayout(const MlpShape& shape, int S_) : S(S_) {
  for (int t = 0; t < shape.tensors(); ++t) {
    size.push_back(shape.tensor_size(t));
    offset.push_back(total);
    total += S * size.back();
  }
}

BlockParams::BlockParams(float* base, const ParamLayout& lay, int m0) : layout(&lay) {
  for (std::size_t i = 0; i < lay.size.size(); ++i) t.push_back(base + lay.at(static_cast<int>(i), m0));
}

namespace {
bool uses_he(const DenseLayer& l) {
  if (l.init != LayerConfig::Init::Auto) return l.init == LayerConfig::Init::He;
  return l.act == Activation::Relu || l.act == Activation::LeakyRelu || l.act == Activation::Gelu;
}
}  // namespace

std::vector<float> init_params(const MlpShape& shape, const ParamLayout& layout,
                               std::uint64_t seed, int first_member, const std::vector<float>& member_scale) {
  std::vector<float> p(layout.total, 0.0f);
  for (int li = 0; li < static_cast<int>(shape.layers.size()); ++li) {
    const DenseLayer& l = shape.layers[li];
    const bool he = uses_he(l);
    const float scale = he ? std::sqrt(2.0f / l.in) : std::sqrt(6.0f / (l.in + l.out));
    const std::int64_t n = static_cast<std::int64_t>(l.in) * l.out;
    for (int s = 0; s < layout.S; ++s) {
      const auto member = static_cast<std::uint32_t>(first_member + s);
      float* w = p.data() + layout.at(2 * li, s);
      const float k = member_scale.empty() ? 1.0f : member_scale[s];
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t ctr = (static_cast<std::uint64_t>(li) << 40) | static_cast<std::uint64_t>(i);
        const Philox4x32 r = random_words(seed, member, Purpose::Init, ctr);
        w[i] = he ? scale * standard_normal(r.v[0], r.v[1]) : scale * (2.0f * uniform01(r.v[0]) - 1.0f);
        if (k != 1.0f) w[i] *= k;
      }
    }
  }
  return p;
}

}  // namespace tn
