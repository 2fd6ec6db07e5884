// Built-in generators besides spirals: moons (two classes) and sine (regression),
// deterministic in source.seed through the counter-based RNG (purpose Data, counter = row).
#include <cmath>

#include "data/sources.h"
#include "math/rng.h"

namespace tn {
namespace {

constexpr double kPi = 3.141592653589793;

Dataset generated(const char* name, int n, std::vector<std::string> feature_names) {
  Dataset d;
  d.n = n;
  d.features = static_cast<int>(feature_names.size());
  d.targets = 1;
  d.feature_names = std::move(feature_names);
  d.origin = std::string(name) + "(n=" + std::to_string(n) + ")";
  d.X.resize(static_cast<std::size_t>(n) * d.features);
  d.y.resize(n);
  return d;
}

Philox4x32 row_words(const SourceConfig& src, int i) {
  return random_words(src.seed, kSharedMember, Purpose::Data, static_cast<std::uint64_t>(i));
}

}  // namespace

Dataset make_moons(const SourceConfig& src) {
  Dataset d = generated("moons", src.n, {"x", "y"});
  d.num_classes = 2;
  d.class_names = {"0", "1"};
  const int n_outer = src.n / 2, n_inner = src.n - n_outer;
  for (int i = 0; i < d.n; ++i) {
    const bool inner = i >= n_outer;
    const int k = inner ? i - n_outer : i, count = inner ? n_inner : n_outer;
    const double t = count > 1 ? kPi * k / (count - 1) : 0.0;  // numpy.linspace(0, π, count)
    const double x = inner ? 1.0 - std::cos(t) : std::cos(t);
    const double y = inner ? 1.0 - std::sin(t) - 0.5 : std::sin(t);
    const Philox4x32 w = row_words(src, i);
    d.X[2 * i] = static_cast<float>(x + src.noise * standard_normal(w.v[0], w.v[1]));
    d.X[2 * i + 1] = static_cast<float>(y + src.noise * standard_normal(w.v[2], w.v[3]));
    d.y[i] = inner ? 1.0f : 0.0f;
  }
  return d;
}

Dataset make_sine(const SourceConfig& src) {
  Dataset d = generated("sine", src.n, {"x"});
  for (int i = 0; i < d.n; ++i) {
    const Philox4x32 w = row_words(src, i);
    const double x = -kPi + 2.0 * kPi * uniform01_double(w.v[0], w.v[1]);
    d.X[i] = static_cast<float>(x);
    d.y[i] = static_cast<float>(std::sin(x) + src.noise * standard_normal(w.v[2], w.v[3]));
  }
  return d;
}

}  // namespace tn
