// Splits and normalization: statistics from the training split only, minmax and standard,
// per group, and sources that bring their own test set.
#include <doctest/doctest.h>

#include <cmath>

#include "data/prepare.h"

using namespace tn;

namespace {

// n samples, 2 features: x0 = i, x1 = 5 (constant); labels alternate; groups by i % 3.
Dataset ramp(int n, bool groups = false) {
  Dataset d;
  d.n = n;
  d.features = 2;
  d.num_classes = 2;
  d.origin = "ramp";
  for (int i = 0; i < n; ++i) {
    d.X.push_back(static_cast<float>(i));
    d.X.push_back(5.0f);
    d.y.push_back(static_cast<float>(i % 2));
    if (groups) d.group.push_back(i % 3);
  }
  if (groups) d.group_names = {"a", "b", "c"};
  return d;
}

}  // namespace

TEST_CASE("standard and minmax statistics come from the training split only") {
  DataConfig cfg;
  cfg.split = {0.5, 0.0, 0.5, 1};
  cfg.normalize = Normalize::Standard;
  const PreparedData p = prepare_data(ramp(20), cfg);
  REQUIRE(p.train.n == 10);
  double mean = 0, sq = 0;
  for (int r : p.train.rows) mean += r;
  mean /= 10;
  for (int r : p.train.rows) sq += (r - mean) * (r - mean);
  CHECK(p.mean[0] == doctest::Approx(mean));
  CHECK(p.std[0] == doctest::Approx(std::sqrt(sq / 10)));
  CHECK(p.std[1] == 1.0f);  // constant feature: only shifted
  CHECK(p.train.X[1] == 0.0f);
  // The test split is transformed with the training statistics.
  CHECK(p.test.X[0] == doctest::Approx((p.test.rows[0] - mean) / std::sqrt(sq / 10)));

  cfg.normalize = Normalize::MinMax;
  const PreparedData m = prepare_data(ramp(20), cfg);
  int lo = 99, hi = -1;
  for (int r : m.train.rows) lo = std::min(lo, r), hi = std::max(hi, r);
  CHECK(m.mean[0] == lo);
  CHECK(m.std[0] == hi - lo);
  for (int i = 0; i < m.train.n; ++i) {
    CHECK(m.train.X[2 * i] >= 0.0f);
    CHECK(m.train.X[2 * i] <= 1.0f);
  }
}

TEST_CASE("per-group normalization uses each group's training rows") {
  DataConfig cfg;
  cfg.normalize = Normalize::Standard;
  cfg.normalize_per_member = true;
  cfg.per_member = PerMember::GroupBy;
  const PreparedData p = prepare_data(ramp(30, true), cfg);
  REQUIRE(p.mean.size() == 6);  // [3 groups, 2 features]
  for (int g = 0; g < 3; ++g) {
    double mean = 0;
    for (int i = g; i < 30; i += 3) mean += i;
    CHECK(p.mean[2 * g] == doctest::Approx(mean / 10));
  }
  // Every group is centred on its own mean.
  double sums[3] = {0, 0, 0};
  for (int i = 0; i < p.train.n; ++i) sums[p.train.group[i]] += p.train.X[2 * i];
  for (double s : sums) CHECK(s == doctest::Approx(0.0).epsilon(1e-4));
}

TEST_CASE("a predefined test set stays the test split, val is carved from the rest") {
  Dataset d = ramp(100);
  d.predefined_test = 20;
  DataConfig cfg;
  cfg.split = {0.75, 0.25, 0.0, 2};
  const PreparedData p = prepare_data(d, cfg);
  CHECK(p.test.n == 20);
  CHECK(p.val.n == 20);  // 25% of the 80 training-file samples
  CHECK(p.train.n == 60);
  for (int r : p.test.rows) CHECK(r >= 80);
  for (int r : p.train.rows) CHECK(r < 80);
}
