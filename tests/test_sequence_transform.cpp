// Series transforms, window scaling and naive forecasts (data/sequence.h rules 6 to 8) on
// hand-computed series: the windows a model sees, the targets, their inverses back to the
// original values, the refusal of non-positive values for log_diff and pct_change, and new
// history cut exactly as training cut its splits.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

#include "config/config.h"
#include "data/prepare.h"
#include "data/sequence.h"
#include "data/series_windows.h"
#include "source_test_util.h"

using namespace tn;
using tn::test::data_error;

namespace {

// One series, column p (the values given) and q = 10·p.
Dataset series(const std::vector<float>& p, int groups = 0) {
  Dataset d;
  d.n = static_cast<int>(p.size());
  d.features = 2;
  d.feature_names = {"p", "q"};
  d.origin = "prices.csv";
  for (int i = 0; i < d.n; ++i) {
    d.X.insert(d.X.end(), {p[i], 10 * p[i]});
    d.lines.push_back(i + 2);  // after the header
    if (groups) d.group.push_back(i * groups / d.n);
  }
  for (int g = 0; g < groups; ++g) d.group_names.push_back(fmt::format("s{}", g));
  return d;
}

DataConfig config(int window, int horizon, SeriesTransform t, SplitConfig split = {1, 0, 0, 0}) {
  DataConfig c;
  c.source.type = "csv";
  c.split = split;
  c.sequence.window = window;
  c.sequence.horizon = horizon;
  c.sequence.features = {"p"};
  c.sequence.target = c.sequence.features.front();  // the price forecasts itself
  c.sequence.transform = t;
  return c;
}

const std::vector<float> kPrices = {100, 110, 99, 99, 120, 90, 108};

}  // namespace

TEST_CASE("sequence transforms: changes and their inverses, exact on a hand-computed series") {
  CHECK(series_change(SeriesTransform::Diff, 100, 110) == 10);
  CHECK(series_change(SeriesTransform::PctChange, 100, 110) == doctest::Approx(0.1).epsilon(1e-15));
  CHECK(series_change(SeriesTransform::LogDiff, 100, 110) == std::log(1.1));
  CHECK(series_change(SeriesTransform::None, 100, 110) == 110);
  for (SeriesTransform t : {SeriesTransform::Diff, SeriesTransform::LogDiff, SeriesTransform::PctChange})
    CHECK(apply_change(t, 99, series_change(t, 99, 120)) == doctest::Approx(120).epsilon(1e-14));

  // diff, window 2, horizon 1: windows start at point 1 (point 0 has no change).
  PreparedData p = prepare_data(series(kPrices), config(2, 1, SeriesTransform::Diff));
  REQUIRE(p.train.n == 4);  // t = 1, 2, 3, 4: targets at points 3 .. 6
  CHECK(p.train.X == std::vector<float>{10, -11, -11, 0, 0, 21, 21, -30});
  CHECK(p.train.y == std::vector<float>{0, 21, -30, 18});  // the change from the window's last point
  CHECK(p.train.rows == std::vector<int>{3, 4, 5, 6});
  CHECK(p.train.units.level == std::vector<float>{99, 99, 120, 90});
  CHECK(p.train.units.offset.empty());
  CHECK(p.train.units.original(p.train.y) == std::vector<float>{99, 120, 90, 108});

  // Horizon 2: the target is the change over two steps.
  p = prepare_data(series(kPrices), config(2, 2, SeriesTransform::Diff));
  CHECK(p.train.y == std::vector<float>{21, -9, -12});  // 120 − 99, 90 − 99, 108 − 120
  CHECK(p.train.units.original(p.train.y) == std::vector<float>{120, 90, 108});

  // pct_change and log_diff: every original value comes back.
  for (SeriesTransform t : {SeriesTransform::PctChange, SeriesTransform::LogDiff}) {
    p = prepare_data(series(kPrices), config(3, 1, t));
    REQUIRE(p.train.n == 3);
    CHECK(p.train.X[0] == static_cast<float>(series_change(t, 100, 110)));
    CHECK(p.train.y[2] == static_cast<float>(series_change(t, 90, 108)));
    const std::vector<float> back = p.train.units.original(p.train.y);
    for (int i = 0; i < 3; ++i) CHECK(back[i] == doctest::Approx(kPrices[i + 4]).epsilon(1e-6));
  }

  // With standard scaling the statistics are those of the training range's changes.
  DataConfig c = config(2, 1, SeriesTransform::Diff);
  c.normalize = Normalize::Standard;
  p = prepare_data(series(kPrices), c);
  const double changes[6] = {10, -11, 0, 21, -30, 18};
  double m = 0, v = 0;
  for (double x : changes) m += x / 6;
  for (double x : changes) v += (x - m) * (x - m) / 6;
  REQUIRE(p.mean.size() == 1);
  CHECK(p.mean[0] == doctest::Approx(m).epsilon(1e-6));
  CHECK(p.std[0] == doctest::Approx(std::sqrt(v)).epsilon(1e-6));
  CHECK(p.target_mean == p.mean);  // horizon 1: the same changes
  CHECK(p.train.X[0] == (10.0f - p.mean[0]) / p.std[0]);
  const std::vector<float> back = p.train.units.original(p.train.y);
  for (int i = 0; i < 4; ++i) CHECK(back[i] == doctest::Approx(kPrices[i + 3]).epsilon(1e-6));
}

TEST_CASE("sequence transforms: log_diff and pct_change refuse non-positive values, naming series, line and value") {
  std::vector<float> prices = kPrices;
  prices[5] = -2.5f;
  DataConfig c = config(2, 1, SeriesTransform::LogDiff);
  c.per_member = PerMember::GroupBy;
  CHECK_HAS(data_error([&] { prepare_data(series(prices, 1), c); }),
            "prices.csv:7: data.sequence.transform log_diff: series 's0' has p = -2.5; log_diff needs positive values");
  prices[5] = 0;
  c.sequence.transform = SeriesTransform::PctChange;
  CHECK_HAS(data_error([&] { prepare_data(series(prices, 1), c); }),
            "prices.csv:7: data.sequence.transform pct_change: series 's0' has p = 0; pct_change needs positive "
            "values (prices, quantities, levels). Use transform: diff");
  c.sequence.transform = SeriesTransform::Diff;  // any numbers
  CHECK(prepare_data(series(prices, 1), c).train.n == 4);
  // The train range needs one point more than one window: its first point has no change.
  c.split = {0.5, 0, 0.5, 0};
  CHECK_HAS(data_error([&] { prepare_data(series(std::vector<float>(6, 1.0f), 1), c); }),
            "its train range (split.train 0.5) has 3; one window needs window + horizon + 1 = 4 points (with "
            "data.sequence.transform the series' first point only starts the changes)");
}

TEST_CASE("window scaling: each window standardized by its own inputs, undone on the output") {
  DataConfig c = config(3, 1, SeriesTransform::None);
  c.sequence.scale = SeriesScale::Window;
  const PreparedData p = prepare_data(series(kPrices), c);
  REQUIRE(p.train.n == 4);
  CHECK(p.mean.empty());
  CHECK(p.target_mean.empty());
  // Window 0: 100, 110, 99 — mean 103, population std sqrt(74/3).
  const float m = 103, s = static_cast<float>(std::sqrt(74.0 / 3));
  CHECK(p.train.X[0] == (100 - m) / s);
  CHECK(p.train.X[1] == (110 - m) / s);
  CHECK(p.train.y[0] == (99 - m) / s);
  CHECK(p.train.units.offset[0] == m);
  CHECK(p.train.units.scale[0] == s);
  for (int i = 0; i < 4; ++i) {  // every window has mean 0 and std 1; the targets come back
    double a = 0, b = 0;
    for (int k = 0; k < 3; ++k) a += p.train.X[i * 3 + k] / 3.0;
    for (int k = 0; k < 3; ++k) b += (p.train.X[i * 3 + k] - a) * (p.train.X[i * 3 + k] - a) / 3.0;
    CHECK(a == doctest::Approx(0).epsilon(1e-6));
    CHECK(b == doctest::Approx(1).epsilon(1e-6));
    CHECK(p.train.units.original(p.train.y[i], i) == doctest::Approx(kPrices[i + 3]).epsilon(1e-6));
  }
  // A constant window keeps scale 1: 99, 99 with window 2.
  c.sequence.window = 2;
  const PreparedData q = prepare_data(series(kPrices), c);
  CHECK(q.train.units.scale[2] == 1.0f);
  CHECK(q.train.y[2] == 120 - 99);

  // With log_diff the window's log returns are standardized, and the forecast is a price again.
  c.sequence.window = 3;
  c.sequence.transform = SeriesTransform::LogDiff;
  const PreparedData r = prepare_data(series(kPrices), c);
  REQUIRE(r.train.n == 3);
  for (int i = 0; i < 3; ++i)
    CHECK(r.train.units.original(r.train.y[i], i) == doctest::Approx(kPrices[i + 4]).epsilon(1e-6));
}

TEST_CASE("naive forecasts: persistence, seasonal naive and drift by hand, in model units too") {
  DataConfig c = config(2, 2, SeriesTransform::None);
  c.sequence.season = 3;
  const PreparedData p = prepare_data(series(kPrices), c);
  REQUIRE(p.train.n == 4);  // windows end at points 1, 2, 3, 4; targets at 3, 4, 5, 6
  CHECK(p.train.naive.persistence == std::vector<float>{110, 99, 99, 120});
  // Seasonal naive, season 3, horizon 2: the value at T + 2 − 3 = T − 1.
  CHECK(p.train.naive.seasonal == std::vector<float>{100, 110, 99, 99});
  // Drift: y_T + 2·(y_T − y_0)/T.
  CHECK(p.train.naive.drift == std::vector<float>{130, 98, static_cast<float>(99 - 2.0 / 3), 130});
  // Season longer than the history: NaN.
  c.sequence.season = 5;
  const PreparedData q = prepare_data(series(kPrices), c);
  CHECK(std::isnan(q.train.naive.seasonal[0]));
  CHECK(q.train.naive.seasonal[3] == 110);  // T = 4: the value at point 1
  // Without a season, all NaN; with a transform, persistence is the change 0 in model units.
  DataConfig d = config(2, 1, SeriesTransform::LogDiff);
  const PreparedData r = prepare_data(series(kPrices), d);
  CHECK(std::isnan(r.train.naive.seasonal[0]));
  CHECK(r.train.units.model_units(r.train.naive.persistence) == std::vector<float>(4, 0.0f));
}

TEST_CASE("new history: windows_to_evaluate cuts the test range exactly as training cut its test split") {
  for (SeriesScale scale : {SeriesScale::Series, SeriesScale::Window}) {
    DataConfig c = config(3, 1, SeriesTransform::LogDiff, {0.5, 0, 0.5, 0});
    std::vector<float> prices;
    for (int i = 0; i < 40; ++i) prices.push_back(50 + 10 * std::sin(i * 0.7f) + 0.5f * i);
    c.sequence.scale = scale;
    if (scale == SeriesScale::Series) c.normalize = Normalize::Standard;
    const PreparedData p = prepare_data(series(prices), c);
    // The test range (points 20..39) with the point before it, cut from its start: the same windows.
    const Dataset tail = series(std::vector<float>(prices.begin() + 19, prices.end()));
    const SeriesNormalization norm{p.mean, p.std, p.target_mean, p.target_std};
    const SeriesWindows w = windows_to_evaluate(tail, c.sequence, norm, {0});
    REQUIRE(w.n == p.test.n);
    CHECK(w.X == p.test.X);
    CHECK(w.y == p.test.y);
    CHECK(w.units.level == p.test.units.level);
    CHECK(w.units.offset == p.test.units.offset);
    CHECK(w.naive.persistence == p.test.naive.persistence);
    // The last window's forecast of the next value from the series' last 3 points (and the one before).
    const SeriesWindows f = windows_to_forecast(tail, c.sequence, norm, {0});
    REQUIRE(f.n == 1);
    CHECK(f.units.level == std::vector<float>{prices.back()});
    CHECK_HAS(data_error([&] {
                windows_to_forecast(series(std::vector<float>(prices.end() - 3, prices.end())), c.sequence, norm, {0});
              }),
              "has 3 rows, but a forecast needs 4 (data.sequence.window 3 + 1: data.sequence.transform has no change "
              "at the first row)");
  }
}
