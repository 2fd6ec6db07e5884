// The model a config describes: shape checks against data and loss, initialization.
#include "model/build.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "data/prepare.h"
#include "math/rng.h"

namespace tn {

ModelShape make_model_shape(const ModelConfig& model, const LossConfig& loss, int features,
                            int num_classes, int targets, int seq_len, int step_features) {
  ModelShape shape;
  int in = features;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const LayerConfig& lc = model.layers[i];
    if (lc.type == "dense") {
      shape.layers.push_back({in, lc.units, lc.activation, lc.leaky_slope, lc.init, static_cast<float>(lc.dropout)});
      in = lc.units;
      continue;
    }
    if (seq_len <= 0)
      throw ConfigError("model.layers[" + std::to_string(i) + "]: a " + lc.type +
                        " layer reads sequences, but the data are plain feature vectors; describe windows "
                        "with data.sequence: {window: ..., target: ...}");
    if (shape.recurrent.empty()) {
      shape.seq_len = seq_len;
      shape.step_features = step_features;
      in = step_features;
    }
    shape.recurrent.push_back({lc.type == "lstm" ? CellType::Lstm : CellType::Gru, in, lc.units,
                               lc.return_sequences, static_cast<float>(lc.forget_bias)});
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

ModelShape make_model_shape(const Config& cfg, const PreparedData& data) {
  return make_model_shape(cfg.model, cfg.loss, data.features, data.num_classes, data.targets, data.seq_len,
                          data.step_features);
}

namespace {

bool uses_he(const DenseLayer& l) {
  if (l.init != InitRule::Auto) return l.init == InitRule::He;
  return l.act == Activation::Relu || l.act == Activation::LeakyRelu || l.act == Activation::Gelu;
}

// Uniform(−limit, limit) or normal(0, std) draws of tensor `id` for every member; counter
// (id << 40 | i) keeps each value a pure function of (seed, member, tensor, index).
void fill_weights(std::vector<float>& p, const ParamLayout& layout, int tensor, std::uint64_t id, bool normal,
                  float scale, std::uint64_t seed, const std::vector<int>& members, const std::vector<float>& member_scale) {
  const std::int64_t n = layout.size[tensor];
  // Members in parallel on every core (each value is a pure function of its counter, so the
  // split does not matter): a 2->256->256->2 swarm of 128 draws 8.5M values, ~0.3 s on one
  // core. The team size is named because OpenBLAS's OpenMP build sets the default to 1.
#pragma omp parallel for schedule(static) num_threads(omp_get_num_procs()) if (n * layout.S >= (1 << 16))
  for (int s = 0; s < layout.S; ++s) {
    const auto member = static_cast<std::uint32_t>(members[static_cast<std::size_t>(s)]);
    float* w = p.data() + layout.at(tensor, s);
    const float k = member_scale.empty() ? 1.0f : member_scale[s];
    for (std::int64_t i = 0; i < n; ++i) {
      const Philox4x32 r = random_words(seed, member, Purpose::Init, (id << 40) | static_cast<std::uint64_t>(i));
      w[i] = normal ? scale * standard_normal(r.v[0], r.v[1]) : scale * (2.0f * uniform01(r.v[0]) - 1.0f);
      if (k != 1.0f) w[i] *= k;
    }
  }
}

}  // namespace

std::vector<float> init_params(const ModelShape& shape, const ParamLayout& layout,
                               std::uint64_t seed, int first_member, const std::vector<float>& member_scale) {
  std::vector<int> members(static_cast<std::size_t>(layout.S));
  for (int s = 0; s < layout.S; ++s) members[static_cast<std::size_t>(s)] = first_member + s;
  return init_params(shape, layout, seed, members, member_scale);
}

std::vector<float> init_params(const ModelShape& shape, const ParamLayout& layout, std::uint64_t seed,
                               const std::vector<int>& members, const std::vector<float>& member_scale) {
  std::vector<float> p(layout.total, 0.0f);
  for (int li = 0; li < static_cast<int>(shape.layers.size()); ++li) {
    const DenseLayer& l = shape.layers[li];
    const bool he = uses_he(l);
    const float scale = he ? std::sqrt(2.0f / l.in) : std::sqrt(6.0f / (l.in + l.out));
    fill_weights(p, layout, shape.dense_tensor(li), static_cast<std::uint64_t>(li), he, scale, seed, members,
                 member_scale);
  }
  // Recurrent tensors draw from ids above any dense layer's (1 << 20 | tensor index).
  for (int r = 0; r < static_cast<int>(shape.recurrent.size()); ++r) {
    const RecurrentLayer& l = shape.recurrent[r];
    const int t0 = shape.recurrent_tensor(r);
    const std::uint64_t id = std::uint64_t{1} << 20;
    fill_weights(p, layout, t0, id | t0, false, std::sqrt(6.0f / (l.in + l.units)), seed, members, member_scale);
    fill_weights(p, layout, t0 + 1, id | (t0 + 1), false, std::sqrt(3.0f / l.units), seed, members, member_scale);
    if (l.cell == CellType::Lstm && l.forget_bias != 0.0f)
      for (int s = 0; s < layout.S; ++s)
        std::fill_n(p.data() + layout.at(t0 + 2, s) + l.units, l.units, l.forget_bias);
  }
  return p;
}

}  // namespace tn
