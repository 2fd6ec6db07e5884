// Two interleaved spirals (W. Whitney, "Parallelizing neural networks on one GPU with JAX",
// 2021): t = linspace(0, 1, n), r = √t, θ = r·rotations·2π, a random sign s = ±1 picks the
// class (s > 0 → 1), point = r·s·(cos θ, sin θ) + N(0, noise²) per coordinate.
#include <cmath>

#include "data/dataset.h"
#include "math/rng.h"

namespace tn {

Dataset make_spirals(const SourceConfig& src) {
  Dataset d;
  d.n = src.n;
  d.features = 2;
  d.targets = 1;
  d.num_classes = 2;
  d.feature_names = {"x", "y"};
  d.class_names = {"0", "1"};
  d.origin = "spirals(n=" + std::to_string(src.n) + ")";
  d.X.resize(static_cast<std::size_t>(d.n) * 2);
  d.y.resize(d.n);
  const double two_pi = 6.283185307179586;
  for (int i = 0; i < d.n; ++i) {
    const double t = d.n > 1 ? static_cast<double>(i) / (d.n - 1) : 0.0;
    const double r = std::sqrt(t);
    const double theta = r * src.rotations * two_pi;
    const Philox4x32 w = random_words(src.seed, kSharedMember, Purpose::Data, static_cast<std::uint64_t>(i));
    const double sign = (w.v[0] & 1u) ? 1.0 : -1.0;
    const float nx = standard_normal(w.v[1], w.v[2]);
    const float ny = standard_normal(w.v[3], w.v[1] ^ 0x9E3779B9u);
    d.X[2 * i] = static_cast<float>(r * sign * std::cos(theta) + src.noise * nx);
    d.X[2 * i + 1] = static_cast<float>(r * sign * std::sin(theta) + src.noise * ny);
    d.y[i] = sign > 0 ? 1.0f : 0.0f;
  }
  return d;
}

}  // namespace tn
