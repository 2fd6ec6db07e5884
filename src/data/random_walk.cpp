// The random_walk generator: seeded geometric random walks with drift and seasonality, as a
// long-format table (date, ticker, close), deterministic in source.seed through the
// counter-based RNG (purpose Data, member = series index).
#include <cmath>
#include <cstdio>
#include <limits>

#include "data/sources.h"
#include "math/rng.h"

namespace tn {
namespace {

constexpr double kTwoPi = 6.283185307179586;
// Counters of the per-series parameters; steps use counters 1..length-1.
constexpr std::uint64_t kParamCounter = 1ull << 40;

// Days since 1970-01-01 → "YYYY-MM-DD" (proleptic Gregorian; H. Hinnant's civil_from_days).
std::string iso_date(long z) {
  z += 719468;
  const long era = (z >= 0 ? z : z - 146096) / 146097;
  const long doe = z - era * 146097;
  const long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long mp = (5 * doy + 2) / 153;
  const long d = doy - (153 * mp + 2) / 5 + 1;
  const long m = mp < 10 ? mp + 3 : mp - 9;
  const long y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[48];  // room for any three longs, so the compiler sees no truncation
  std::snprintf(buf, sizeof buf, "%04ld-%02ld-%02ld", y, m, d);
  return buf;
}

// Business day t (Monday to Friday, no holidays) counted from Wednesday 2020-01-01 (t = 0).
std::string business_day(long t) {
  constexpr long kStart = 18262;   // 2020-01-01 in days since 1970-01-01
  constexpr long kStartPos = 2;    // its position in the week (Monday = 0)
  const long k = kStartPos + t;
  return iso_date(kStart - kStartPos + (k / 5) * 7 + k % 5);
}

std::string ticker(int s, int series) {
  int width = 3;
  for (int m = series - 1; m >= 1000; m /= 10) ++width;
  const std::string digits = std::to_string(s);
  std::string text = "S";
  text.append(digits.size() < static_cast<std::size_t>(width) ? width - digits.size() : 0, '0');
  return text.append(digits);
}

double uniform(const Philox4x32& w, int k, double lo, double hi) {
  return lo + (hi - lo) * uniform01_double(w.v[k], w.v[k + 1]);
}

}  // namespace

Dataset make_random_walk(const SourceConfig& src) {
  const RandomWalkConfig& c = src.walk;
  const int S = c.series, L = c.length;
  Dataset d;
  d.n = S * L;
  d.features = 1;
  d.targets = 0;
  d.feature_names = {"close"};
  d.origin = "random_walk(series=" + std::to_string(S) + ", length=" + std::to_string(L) + ")";
  d.time_column = "date";
  d.group_column = "ticker";
  d.X.resize(static_cast<std::size_t>(d.n));
  d.group.resize(static_cast<std::size_t>(d.n));
  d.time.reserve(static_cast<std::size_t>(d.n));
  std::vector<std::string> dates(static_cast<std::size_t>(L));
  for (int t = 0; t < L; ++t) dates[t] = business_day(t);
  for (int s = 0; s < S; ++s) {
    d.group_names.push_back(ticker(s, S));
    const auto words = [&](std::uint64_t counter) {
      return random_words(src.seed, static_cast<std::uint32_t>(s), Purpose::Data, counter);
    };
    const Philox4x32 a = words(kParamCounter), b = words(kParamCounter + 1),
                     p = words(kParamCounter + 2);
    const double drift = uniform(a, 0, c.drift_lo, c.drift_hi);
    const double vol = uniform(a, 2, c.volatility_lo, c.volatility_hi);
    const double amplitude = uniform(b, 0, c.season_lo, c.season_hi);
    const double phase = uniform(b, 2, 0.0, kTwoPi);
    double x = uniform(p, 0, std::log(c.start_lo), std::log(c.start_hi));  // log price
    for (int t = 0; t < L; ++t) {
      if (t > 0) {
        const Philox4x32 w = words(static_cast<std::uint64_t>(t));
        x += drift + vol * standard_normal(w.v[0], w.v[1]);
      }
      const double close = std::exp(x + amplitude * std::sin(kTwoPi * t / c.season_period + phase));
      if (!(close <= std::numeric_limits<float>::max()))
        throw DataError("data.source: random_walk series " + d.group_names.back() +
                        " exceeds the float32 range at step " + std::to_string(t) +
                        "; lower data.source.drift, volatility or length");
      const std::size_t row = static_cast<std::size_t>(s) * L + t;
      d.X[row] = static_cast<float>(close);
      d.group[row] = s;
      d.time.push_back(dates[t]);
    }
  }
  return d;
}

}  // namespace tn
