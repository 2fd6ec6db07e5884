// Splitting and normalization.
#include "data/prepare.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "swarm/sampler.h"
#include "data/sequence.h"
#include "math/rng.h"

namespace tn {
namespace {

SplitData take_rows(const Dataset& d, const std::vector<std::uint32_t>& perm, int begin, int end,
                    const char* name) {
  SplitData s;
  s.name = name;
  s.n = end - begin;
  s.X.resize(static_cast<std::size_t>(s.n) * d.features);
  s.y.resize(static_cast<std::size_t>(s.n) * d.targets);
  for (int i = 0; i < s.n; ++i) {
    const std::uint32_t r = perm[begin + i];
    s.rows.push_back(static_cast<int>(r));
    if (!d.group.empty()) s.group.push_back(d.group[r]);
    // Pointer arithmetic, not &v[k]: a dataset may have no features or targets (empty arrays).
    std::copy_n(d.X.data() + static_cast<std::size_t>(r) * d.features, d.features,
                s.X.data() + static_cast<std::size_t>(i) * d.features);
    std::copy_n(d.y.data() + static_cast<std::size_t>(r) * d.targets, d.targets,
                s.y.data() + static_cast<std::size_t>(i) * d.targets);
  }
  return s;
}

// Statistics of the training rows whose group is g (all rows when g < 0) into mean/std at
// offset `at`: standard (mean, std) or minmax (min, max − min); constant features get 1 so
// they are only shifted.
void fit(const SplitData& train, int F, Normalize method, int g, std::vector<float>& mean,
         std::vector<float>& std, std::size_t at) {
  for (int f = 0; f < F; ++f) {
    double a = 0, b = 0, lo = INFINITY, hi = -INFINITY;
    long count = 0;
    for (int i = 0; i < train.n; ++i) {
      if (g >= 0 && train.group[i] != g) continue;
      const double x = train.X[static_cast<std::size_t>(i) * F + f];
      a += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      ++count;
    }
    const double m = count ? a / count : 0.0;
    for (int i = 0; i < train.n; ++i) {
      if (g >= 0 && train.group[i] != g) continue;
      const double dx = train.X[static_cast<std::size_t>(i) * F + f] - m;
      b += dx * dx;
    }
    const double sd = count ? std::sqrt(b / count) : 0.0;
    const bool standard = method == Normalize::Standard;
    const double offset = standard ? m : (count ? lo : 0.0), scale = standard ? sd : (count ? hi - lo : 0.0);
    mean[at + f] = static_cast<float>(offset);
    std[at + f] = scale > 1e-12 ? static_cast<float>(scale) : 1.0f;
  }
}

}  // namespace

void apply_normalization(std::vector<float>& X, int F, const std::vector<float>& mean,
                         const std::vector<float>& std, const std::vector<int>& group) {
  if (mean.empty()) return;
  const std::size_t n = X.size() / F;
  const bool per_group = mean.size() > static_cast<std::size_t>(F);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = per_group ? static_cast<std::size_t>(group[i]) * F : 0;
    for (int f = 0; f < F; ++f) X[i * F + f] = (X[i * F + f] - mean[at + f]) / std[at + f];
  }
}

PreparedData prepare_data(Dataset d, const DataConfig& cfg) {
  if (cfg.sequence.enabled()) return prepare_sequences(d, cfg);
  PreparedData p;
  p.features = d.features;
  p.targets = d.targets;
  p.num_classes = d.num_classes;
  p.feature_names = d.feature_names;
  p.class_names = d.class_names;
  p.group_names = d.group_names;
  p.origin = d.origin;

  const int n_pool = d.n - d.predefined_test;  // samples that train, val (and test) are cut from
  const int n_val = static_cast<int>(std::lround(cfg.split.val * n_pool));
  const int n_test = d.predefined_test > 0 ? d.predefined_test : static_cast<int>(std::lround(cfg.split.test * n_pool));
  const int n_train = d.n - n_val - n_test;
  if (n_train < 1)
    throw DataError("data.split: " + d.origin + " has " + std::to_string(d.n) +
                    " samples, which leaves none for training; lower split.val/split.test");
  std::vector<std::uint32_t> perm(d.n);
  std::iota(perm.begin(), perm.end(), 0u);
  if (n_train < n_pool) random_permutation(cfg.split.seed, Purpose::Split, 0, n_pool, perm.data());
  p.train = take_rows(d, perm, 0, n_train, "train");
  p.val = take_rows(d, perm, n_train, n_train + n_val, "val");
  p.test = take_rows(d, perm, n_train + n_val, d.n, "test");

  if (cfg.normalize != Normalize::None) {
    const int F = p.features;
    const int G = cfg.normalize_per_member ? static_cast<int>(p.group_names.size()) : 1;
    p.mean.assign(static_cast<std::size_t>(G) * F, 0.0f);
    p.std.assign(static_cast<std::size_t>(G) * F, 1.0f);
    for (int g = 0; g < G; ++g)
      fit(p.train, F, cfg.normalize, cfg.normalize_per_member ? g : -1, p.mean, p.std, static_cast<std::size_t>(g) * F);
    for (SplitData* s : {&p.train, &p.val, &p.test}) apply_normalization(s->X, F, p.mean, p.std, s->group);
  }
  return p;
}

}  // namespace tn
