// Sequence data: windows and targets by hand, chronological split sizes, no leakage across
// split boundaries on random_walk, per-series normalization from the training range only,
// and the member sets of group_by over series.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "config/config.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "data/sources.h"
#include "source_test_util.h"

using namespace tn;
using tn::test::data_error;

namespace {

// One series of n points, columns a = i and b = 100 + i (groups: series g holds rows with i % G == g).
Dataset table(int n, int groups = 0) {
  Dataset d;
  d.n = n;
  d.features = 2;
  d.targets = 0;
  d.feature_names = {"a", "b"};
  d.origin = "table";
  for (int i = 0; i < n; ++i) {
    d.X.push_back(static_cast<float>(i));
    d.X.push_back(100.0f + static_cast<float>(i));
    if (groups) d.group.push_back(i % groups);
  }
  for (int g = 0; g < groups; ++g) d.group_names.push_back(fmt::format("g{}", g));
  return d;
}

DataConfig sequence(int window, int horizon, int stride, std::vector<std::string> features,
                    std::string target, SplitConfig split = {0.6, 0.2, 0.2, 0}) {
  DataConfig c;
  c.source.type = "csv";
  c.split = split;
  c.sequence.window = window;
  c.sequence.horizon = horizon;
  c.sequence.stride = stride;
  c.sequence.features = std::move(features);
  c.sequence.target = std::move(target);
  return c;
}

}  // namespace

TEST_CASE("sequence: windows, targets and layout by hand") {
  // 20 points: train [0, 12), val [12, 16), test [16, 20).
  const PreparedData p = prepare_data(table(20), sequence(3, 1, 2, {"a", "b"}, "a"));
  CHECK(p.seq_len == 3);
  CHECK(p.step_features == 2);
  CHECK(p.features == 6);
  CHECK(p.targets == 1);
  CHECK(p.num_classes == 0);
  CHECK(p.feature_names == std::vector<std::string>{"a", "b"});
  CHECK(p.target_mean.empty());
  // Train windows start at 0, 2, 4, 6, 8 (the target t + 3 stays below 12).
  REQUIRE(p.train.n == 5);
  CHECK(std::vector<float>(p.train.X.begin(), p.train.X.begin() + 6) ==
        std::vector<float>{0, 100, 1, 101, 2, 102});
  CHECK(p.train.y == std::vector<float>{3, 5, 7, 9, 11});
  CHECK(p.train.rows == std::vector<int>{3, 5, 7, 9, 11});
  CHECK(p.train.group == std::vector<int>{0, 0, 0, 0, 0});
  REQUIRE(p.val.n == 1);
  CHECK(p.val.X == std::vector<float>{12, 112, 13, 113, 14, 114});
  CHECK(p.val.y == std::vector<float>{15});
  REQUIRE(p.test.n == 1);
  CHECK(p.test.rows == std::vector<int>{19});

  // A target that is not an input, two steps ahead.
  const PreparedData q = prepare_data(table(20), sequence(3, 2, 2, {"a"}, "b", {0.6, 0, 0.4, 0}));
  CHECK(q.step_features == 1);
  REQUIRE(q.train.n == 4);  // t = 0, 2, 4, 6: target t + 4 < 12
  CHECK(std::vector<float>(q.train.X.begin(), q.train.X.begin() + 3) == std::vector<float>{0, 1, 2});
  CHECK(q.train.y == std::vector<float>{104, 106, 108, 110});
  CHECK(q.val.n == 0);
  CHECK(q.test.rows == std::vector<int>{16, 18});  // test [12, 20): t = 12, 14
}

TEST_CASE("sequence: chronological split sizes per series") {
  // L = 101: n_val = round(15.15) = 15, n_test = round(10.1) = 10, n_train = 76.
  PreparedData p = prepare_data(table(101), sequence(1, 1, 1, {"a"}, "a", {0.75, 0.15, 0.1, 0}));
  CHECK(p.train.n == 75);  // targets at points 1..75
  CHECK(p.train.rows.front() == 1);
  CHECK(p.train.rows.back() == 75);
  CHECK(p.val.n == 14);
  CHECK(p.val.rows.front() == 77);
  CHECK(p.val.rows.back() == 90);
  CHECK(p.test.n == 9);
  CHECK(p.test.rows.front() == 92);
  // Halves round away from zero: L = 10, val = test = 0.25 -> 3 points each, train 4.
  p = prepare_data(table(10), sequence(1, 1, 1, {"a"}, "a", {0.5, 0.25, 0.25, 0}));
  CHECK(p.train.rows == std::vector<int>{1, 2, 3});
  CHECK(p.val.rows == std::vector<int>{5, 6});
  CHECK(p.test.rows == std::vector<int>{8, 9});
  // Two series (rows interleaved in the file): each is split on its own points.
  DataConfig c = sequence(2, 1, 1, {"a"}, "a", {0.5, 0.25, 0.25, 0});
  c.per_member = PerMember::GroupBy;
  p = prepare_data(table(24, 2), c);  // 12 points each: train 6, val 3, test 3
  CHECK(p.group_names == std::vector<std::string>{"g0", "g1"});
  CHECK(p.train.n == 8);
  CHECK(p.train.group == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(p.train.rows == std::vector<int>{4, 6, 8, 10, 5, 7, 9, 11});
  CHECK(p.val.rows == std::vector<int>{16, 17});
}

TEST_CASE("sequence: series too short and duplicate times are errors naming the series") {
  CHECK_HAS(data_error([] { prepare_data(table(20), sequence(3, 2, 2, {"a"}, "b")); }),
            "data.sequence: the table (one series without data.per_member group_by) of table has 20 "
            "time points, so its val range (split.val 0.2) has 4; one window needs window + horizon "
            "= 5 points");
  DataConfig c = sequence(8, 1, 1, {"a"}, "a", {0.8, 0.2, 0, 0});
  c.per_member = PerMember::GroupBy;
  CHECK_HAS(data_error([&] { prepare_data(table(30, 3), c); }),
            "data.sequence: series 'g0' of table has 10 time points, so its train range (split.train "
            "0.8) has 8; one window needs window + horizon = 9 points");
  Dataset d = table(6);
  d.time = {"2020-01-01", "2020-01-03", "2020-01-02", "2020-01-04", "2020-01-02", "2020-01-06"};
  d.lines = {2, 3, 4, 5, 6, 7};
  DataConfig t = sequence(1, 1, 1, {"a"}, "a", {1, 0, 0, 0});
  t.sequence.time = "date";
  CHECK_HAS(data_error([&] { prepare_data(d, t); }),
            "table:6: data.sequence.time: the table (one series without data.per_member group_by) "
            "has two rows at time '2020-01-02' (lines 4 and 6)");
}

TEST_CASE("sequence: rows sorted by the time column, numerically or as text") {
  Dataset d = table(5);
  d.time = {"10", "9", "100", "1", "2"};  // numbers: 1, 2, 9, 10, 100 = rows 3, 4, 1, 0, 2
  DataConfig c = sequence(1, 1, 1, {"a"}, "a", {1, 0, 0, 0});
  c.sequence.time = "t";
  PreparedData p = prepare_data(d, c);
  CHECK(p.train.rows == std::vector<int>{4, 1, 0, 2});
  CHECK(p.train.X == std::vector<float>{3, 4, 1, 0});
  CHECK(p.train.time == std::vector<std::string>{"2", "9", "10", "100"});
  d.time = {"2020-01-10", "2020-01-09", "2020-02-01", "2019-12-31", "2020-01-02"};
  p = prepare_data(d, c);
  CHECK(p.train.rows == std::vector<int>{4, 1, 0, 2});
}

TEST_CASE("sequence: per-series normalization is fitted on the training range only") {
  DataConfig c = sequence(2, 1, 1, {"a", "b"}, "b", {0.6, 0.2, 0.2, 0});
  c.per_member = PerMember::GroupBy;
  c.normalize = Normalize::Standard;
  c.normalize_per_member = true;
  Dataset d = table(40, 2);  // 20 points per series: train = the first 12
  const PreparedData p = prepare_data(d, c);
  REQUIRE(p.mean.size() == 4);  // [2 series, 2 step features]
  REQUIRE(p.target_mean.size() == 2);
  for (int g = 0; g < 2; ++g) {
    double m = 0, sq = 0;
    for (int i = 0; i < 12; ++i) m += 2 * i + g;
    m /= 12;
    for (int i = 0; i < 12; ++i) sq += (2 * i + g - m) * (2 * i + g - m);
    CHECK(p.mean[2 * g] == doctest::Approx(m));
    CHECK(p.std[2 * g] == doctest::Approx(std::sqrt(sq / 12)));
    CHECK(p.target_mean[g] == doctest::Approx(100 + m));  // target b = 100 + a
    CHECK(p.target_std[g] == doctest::Approx(std::sqrt(sq / 12)));
  }
  // y' = (y - target_mean) / target_std for the first training window of series 0 (target row 4).
  CHECK(p.train.y[0] == (104.0f - p.target_mean[0]) / p.target_std[0]);

  // Changing the val and test values leaves the statistics alone.
  Dataset e = d;
  for (int i = 24; i < 40; ++i) e.X[2 * i] = e.X[2 * i + 1] = 1e4f;
  const PreparedData q = prepare_data(e, c);
  CHECK(q.mean == p.mean);
  CHECK(q.std == p.std);
  CHECK(q.target_mean == p.target_mean);
  CHECK(q.target_std == p.target_std);
  CHECK(q.train.X == p.train.X);
  CHECK(q.test.X != p.test.X);

  // A global fit: one set of input statistics, the same target statistics for every series.
  c.normalize_per_member = false;
  c.normalize = Normalize::MinMax;
  const PreparedData r = prepare_data(d, c);
  CHECK(r.mean == std::vector<float>{0, 100});
  CHECK(r.std == std::vector<float>{23, 23});  // rows 0..23 are the training points
  CHECK(r.target_mean == std::vector<float>{100, 100});
  CHECK(r.target_std == std::vector<float>{23, 23});
}

TEST_CASE("sequence: random_walk has no leakage across split boundaries") {
  const Config cfg = parse_config(
      "swarm: {size: 6}\nmodel: {layers: [{units: 1}]}\nloss: mse\n"
      "data:\n  source: {type: random_walk, series: 6, length: 160, seed: 4}\n"
      "  split: {train: 0.7, val: 0.15, test: 0.15}\n  per_member: {group_by: ticker}\n"
      "  normalize: standard\n  normalize_per_member: true\n"
      "  sequence: {window: 12, horizon: 3, stride: 2, target: close, time: date}\n",
      "walk.yaml");
  const PreparedData p = prepare_data(load_dataset(cfg.data, false), cfg.data);
  REQUIRE(p.group_names.size() == 6);
  CHECK(p.group_names.front() == "S000");
  const int reach = 12 - 1 + 3;  // target row - first input row of a window
  for (int g = 0; g < 6; ++g) {
    CAPTURE(g);
    const auto rows_of = [&](const SplitData& s) {
      std::vector<int> r;
      for (int i = 0; i < s.n; ++i)
        if (s.group[i] == g) r.push_back(s.rows[i]);
      return r;
    };
    const std::vector<int> tr = rows_of(p.train), va = rows_of(p.val), te = rows_of(p.test);
    REQUIRE(!tr.empty());
    REQUIRE(!va.empty());
    REQUIRE(!te.empty());
    CHECK(tr.back() < va.front() - reach);
    CHECK(va.back() < te.front() - reach);
    // Ranges: train [0, 112), val [112, 136), test [136, 160) of rows g·160 + t.
    CHECK(tr.front() - reach == g * 160);
    CHECK(va.front() - reach == g * 160 + 112);
    CHECK(te.front() - reach == g * 160 + 136);
    CHECK(te.back() < (g + 1) * 160);
  }
  CHECK(p.train.time.size() == static_cast<std::size_t>(p.train.n));
  CHECK(p.train.time.front() == "2020-01-21");  // business day 14 after Wednesday 2020-01-01

  // group_by: member k trains on exactly series k's training windows.
  const MemberSets sets = make_member_sets(cfg, p);
  for (int k = 0; k < 6; ++k) {
    int count = 0;
    for (int i = 0; i < p.train.n; ++i) count += p.train.group[i] == k;
    CHECK(static_cast<int>(sets.size(k)) == count);
    for (std::uint32_t j = sets.offset[k]; j < sets.offset[k + 1]; ++j) CHECK(p.train.group[sets.rows[j]] == k);
  }
}

TEST_CASE("random_walk: deterministic in the seed, ordered tickers and business days") {
  SourceConfig s;
  s.type = "random_walk";
  s.walk.series = 3;
  s.walk.length = 8;
  s.seed = 11;
  const Dataset a = make_random_walk(s), b = make_random_walk(s);
  CHECK(a.X == b.X);
  CHECK(a.group_names == std::vector<std::string>{"S000", "S001", "S002"});
  CHECK(std::vector<std::string>(a.time.begin(), a.time.begin() + 8) ==
        std::vector<std::string>{"2020-01-01", "2020-01-02", "2020-01-03", "2020-01-06",
                                 "2020-01-07", "2020-01-08", "2020-01-09", "2020-01-10"});
  for (float v : a.X) CHECK(v > 0.0f);
  s.seed = 12;
  CHECK(make_random_walk(s).X != a.X);
  // Series s does not depend on how many series there are.
  s.seed = 11;
  s.walk.series = 2;
  const Dataset c = make_random_walk(s);
  CHECK(std::vector<float>(c.X.begin(), c.X.end()) == std::vector<float>(a.X.begin(), a.X.begin() + 16));
  s.walk.series = 1000;
  s.walk.length = 2;
  CHECK(make_random_walk(s).group_names.back() == "S999");
  s.walk.series = 1001;
  CHECK(make_random_walk(s).group_names.back() == "S1000");
}
