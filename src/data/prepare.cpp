// Splitting and normalization.
#include "data/prepare.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "data/sampler.h"
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
    std::copy_n(&d.X[static_cast<std::size_t>(r) * d.features], d.features, &s.X[static_cast<std::size_t>(i) * d.features]);
    std::copy_n(&d.y[static_cast<std::size_t>(r) * d.targets], d.targets, &s.y[static_cast<std::size_t>(i) * d.targets]);
  }
  return s;
}

}  // namespace

void apply_normalization(std::vector<float>& X, int F, const std::vector<float>& mean,
                         const std::vector<float>& std) {
  if (mean.empty()) return;
  const std::size_t n = X.size() / F;
  for (std::size_t i = 0; i < n; ++i)
    for (int f = 0; f < F; ++f) X[i * F + f] = (X[i * F + f] - mean[f]) / std[f];
}

PreparedData prepare_data(Dataset d, const DataConfig& cfg) {
  PreparedData p;
  p.features = d.features;
  p.targets = d.targets;
  p.num_classes = d.num_classes;
  p.feature_names = d.feature_names;
  p.class_names = d.class_names;
  p.origin = d.origin;

  const int n = d.n;
  const int n_val = static_cast<int>(std::lround(cfg.split.val * n));
  const int n_test = static_cast<int>(std::lround(cfg.split.test * n));
  const int n_train = n - n_val - n_test;
  if (n_train < 1)
    throw DataError("data.split: " + d.origin + " has " + std::to_string(n) +
                    " samples, which leaves none for training; lower split.val/split.test");
  std::vector<std::uint32_t> perm(n);
  if (n_train < n) random_permutation(cfg.split.seed, Purpose::Split, 0, n, perm.data());
  else std::iota(perm.begin(), perm.end(), 0u);
  p.train = take_rows(d, perm, 0, n_train, "train");
  p.val = take_rows(d, perm, n_train, n_train + n_val, "val");
  p.test = take_rows(d, perm, n_train + n_val, n, "test");

  if (cfg.normalize == Normalize::Standard) {
    const int F = p.features;
    p.mean.assign(F, 0.0f);
    p.std.assign(F, 1.0f);
    for (int f = 0; f < F; ++f) {
      double sum = 0.0, sq = 0.0;
      for (int i = 0; i < n_train; ++i) sum += p.train.X[static_cast<std::size_t>(i) * F + f];
      const double mean = sum / n_train;
      for (int i = 0; i < n_train; ++i) {
        const double dlt = p.train.X[static_cast<std::size_t>(i) * F + f] - mean;
        sq += dlt * dlt;
      }
      const double sd = std::sqrt(sq / n_train);
      p.mean[f] = static_cast<float>(mean);
      p.std[f] = sd > 1e-12 ? static_cast<float>(sd) : 1.0f;  // constant feature: only centre it
    }
    apply_normalization(p.train.X, F, p.mean, p.std);
    apply_normalization(p.val.X, F, p.mean, p.std);
    apply_normalization(p.test.X, F, p.mean, p.std);
  }
  return p;
}

}  // namespace tn
