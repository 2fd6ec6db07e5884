// Windows over series, chronological splits and per-series normalization (rules in sequence.h).
#include "data/sequence.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace tn {
namespace {

constexpr const char* kRangeNames[3] = {"train", "val", "test"};

struct Table {
  const Dataset& d;
  const SequenceConfig& q;
  int G = 1;                 // series
  std::vector<int> cols;     // X columns of the step features, then of the target
  std::vector<std::vector<int>> series;  // table rows of each series, in time order

  int C() const { return d.features; }
  float at(int row, int k) const { return d.X[static_cast<std::size_t>(row) * C() + cols[k]]; }
  std::string name(int g) const {
    return d.group_names.empty() ? std::string("the table (one series without data.per_member group_by)")
                                 : "series '" + d.group_names[g] + "'";
  }
  std::string where(int row) const {  // "file:line: " or "origin: row r: "
    if (!d.lines.empty()) return d.origin + ":" + std::to_string(d.lines[row]) + ": ";
    return d.origin + ": row " + std::to_string(row) + ": ";
  }
};

int column_index(const Dataset& d, const std::string& name, const char* key) {
  const auto it = std::find(d.feature_names.begin(), d.feature_names.end(), name);
  if (it == d.feature_names.end())
    throw DataError(std::string(key) + ": column '" + name + "' is not in " + d.origin);
  return static_cast<int>(it - d.feature_names.begin());
}

// Sorts each series by the time column (numbers when all are numbers, else text).
void sort_by_time(Table& t) {
  const Dataset& d = t.d;
  std::vector<double> value(d.time.size());
  bool numeric = true;
  for (std::size_t r = 0; r < d.time.size() && numeric; ++r) {
    const std::string& s = d.time[r];
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value[r]);
    numeric = ec == std::errc() && end == s.data() + s.size();
  }
  const auto less = [&](int a, int b) { return numeric ? value[a] < value[b] : d.time[a] < d.time[b]; };
  for (int g = 0; g < t.G; ++g) {
    std::vector<int>& rows = t.series[g];
    std::stable_sort(rows.begin(), rows.end(), less);
    for (std::size_t i = 1; i < rows.size(); ++i)
      if (!less(rows[i - 1], rows[i]))
        throw DataError(t.where(rows[i]) + "data.sequence.time: " + t.name(g) + " has two rows at time '" +
                        d.time[rows[i]] + "' (" + (d.lines.empty() ? "rows " : "lines ") +
                        std::to_string(d.lines.empty() ? rows[i - 1] : d.lines[rows[i - 1]]) + " and " +
                        std::to_string(d.lines.empty() ? rows[i] : d.lines[rows[i]]) +
                        "); each series needs one row per time point");
  }
}

// Point ranges [begin[k], begin[k + 1]) of train, val, test in a series of L points.
struct Ranges {
  long begin[4];
};

Ranges split_series(long L, const SplitConfig& s) {
  const long n_val = std::lround(s.val * L), n_test = std::lround(s.test * L);
  const long n_train = L - n_val - n_test;
  return {{0, n_train, n_train + n_val, L}};
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Fails unless every range with a nonzero fraction holds one window.
void check_lengths(const Table& t, int g, const Ranges& r, const DataConfig& cfg) {
  const SequenceConfig& q = cfg.sequence;
  const double fraction[3] = {cfg.split.train, cfg.split.val, cfg.split.test};
  const long need = static_cast<long>(q.window) + q.horizon;
  for (int k = 0; k < 3; ++k) {
    const long len = r.begin[k + 1] - r.begin[k];
    if (fraction[k] == 0 || len >= need) continue;
    throw DataError(
        "data.sequence: " + t.name(g) + " of " + t.d.origin + " has " +
        std::to_string(r.begin[3]) + " time points, so its " + kRangeNames[k] + " range (split." +
        kRangeNames[k] + " " + short_number(fraction[k]) + ") has " +
        std::to_string(std::max(0L, len)) + "; one window needs window + horizon = " +
        std::to_string(need) + " points. Lower data.sequence.window or horizon, change data.split, "
        "or give the series more rows");
  }
}

// Offset and scale of input k over `rows` (standard: mean, population std; minmax: min, range).
void fit(const Table& t, const std::vector<int>& rows, int k, Normalize method, float& offset, float& scale) {
  double a = 0, b = 0, lo = INFINITY, hi = -INFINITY;
  for (int r : rows) {
    const double x = t.at(r, k);
    a += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double n = static_cast<double>(rows.size()), m = a / n;
  for (int r : rows) b += (t.at(r, k) - m) * (t.at(r, k) - m);
  const bool standard = method == Normalize::Standard;
  const double o = standard ? m : lo, s = standard ? std::sqrt(b / n) : hi - lo;
  offset = static_cast<float>(o);
  scale = s > 1e-12 ? static_cast<float>(s) : 1.0f;
}

void add_windows(const Table& t, int g, long b, long e, const std::vector<float>& v, PreparedData& p,
                 SplitData& out) {
  const SequenceConfig& q = t.q;
  const int K = static_cast<int>(t.cols.size()), F = p.step_features;
  const std::vector<int>& rows = t.series[g];
  for (long s = b; s + q.window - 1 + q.horizon < e; s += q.stride) {
    for (long i = s; i < s + q.window; ++i)
      for (int k = 0; k < F; ++k) out.X.push_back(v[static_cast<std::size_t>(rows[i]) * K + k]);
    const int target_row = rows[s + q.window - 1 + q.horizon];
    out.y.push_back(v[static_cast<std::size_t>(target_row) * K + F]);
    out.rows.push_back(target_row);
    out.group.push_back(g);
    if (!q.time.empty() && !t.d.time.empty()) out.time.push_back(t.d.time[target_row]);
    ++out.n;
  }
}

}  // namespace

PreparedData prepare_sequences(const Dataset& d, const DataConfig& cfg) {
  const SequenceConfig& q = cfg.sequence;
  Table t{d, q, 0, sequence_columns(d, q), series_rows(d, q)};
  t.G = static_cast<int>(t.series.size());

  PreparedData p;
  const int F = static_cast<int>(q.features.size()), K = F + 1;
  p.seq_len = q.window;
  p.step_features = F;
  p.features = q.window * F;
  p.targets = 1;
  p.feature_names = q.features;
  p.group_names = d.group_names;
  p.origin = d.origin;
  const auto it = std::find(q.features.begin(), q.features.end(), q.target);
  p.persistence_feature = it == q.features.end() ? -1 : static_cast<int>(it - q.features.begin());

  std::vector<Ranges> ranges(t.G);
  std::vector<std::vector<int>> train_rows(t.G);
  for (int g = 0; g < t.G; ++g) {
    ranges[g] = split_series(static_cast<long>(t.series[g].size()), cfg.split);
    check_lengths(t, g, ranges[g], cfg);
    train_rows[g].assign(t.series[g].begin(), t.series[g].begin() + ranges[g].begin[1]);
  }

  // Every table value of the used columns, normalized with its series' statistics: [n, K].
  std::vector<float> v(static_cast<std::size_t>(d.n) * K);
  std::vector<float> offset(static_cast<std::size_t>(t.G) * K, 0.0f), scale(offset.size(), 1.0f);
  if (cfg.normalize != Normalize::None) {
    const bool per_series = cfg.normalize_per_member;
    std::vector<int> pooled;
    if (!per_series)
      for (const std::vector<int>& rows : train_rows) pooled.insert(pooled.end(), rows.begin(), rows.end());
    for (int g = 0; g < t.G; ++g)
      for (int k = 0; k < K; ++k) {
        const std::size_t at = static_cast<std::size_t>(g) * K + k;
        if (per_series || g == 0) fit(t, per_series ? train_rows[g] : pooled, k, cfg.normalize, offset[at], scale[at]);
        else offset[at] = offset[k], scale[at] = scale[k];
      }
    const int Gs = per_series ? t.G : 1;
    for (int g = 0; g < Gs; ++g) {
      const std::size_t at = static_cast<std::size_t>(g) * K;
      p.mean.insert(p.mean.end(), offset.begin() + at, offset.begin() + at + F);
      p.std.insert(p.std.end(), scale.begin() + at, scale.begin() + at + F);
    }
    for (int g = 0; g < t.G; ++g) {
      p.target_mean.push_back(offset[static_cast<std::size_t>(g) * K + F]);
      p.target_std.push_back(scale[static_cast<std::size_t>(g) * K + F]);
    }
  }
  for (int g = 0; g < t.G; ++g)
    for (int r : t.series[g])
      for (int k = 0; k < K; ++k) {
        const std::size_t at = static_cast<std::size_t>(g) * K + k;
        v[static_cast<std::size_t>(r) * K + k] = (t.at(r, k) - offset[at]) / scale[at];
      }

  SplitData* splits[3] = {&p.train, &p.val, &p.test};
  for (int k = 0; k < 3; ++k) {
    splits[k]->name = kRangeNames[k];
    for (int g = 0; g < t.G; ++g) add_windows(t, g, ranges[g].begin[k], ranges[g].begin[k + 1], v, p, *splits[k]);
  }
  return p;
}

std::vector<int> sequence_columns(const Dataset& d, const SequenceConfig& q) {
  std::vector<int> cols;
  for (const std::string& f : q.features) cols.push_back(column_index(d, f, "data.sequence.features"));
  cols.push_back(column_index(d, q.target, "data.sequence.target"));
  return cols;
}

std::vector<std::vector<int>> series_rows(const Dataset& d, const SequenceConfig& q) {
  Table t{d, q};
  t.G = d.group.empty() ? 1 : static_cast<int>(d.group_names.size());
  t.series.resize(t.G);
  for (int r = 0; r < d.n; ++r) t.series[d.group.empty() ? 0 : d.group[r]].push_back(r);
  if (!q.time.empty() && !d.time.empty()) sort_by_time(t);
  return std::move(t.series);
}

std::vector<float> persistence_forecast(const PreparedData& p, const SplitData& s) {
  std::vector<float> r;
  if (p.seq_len <= 0 || p.persistence_feature < 0) return r;
  const std::size_t at = static_cast<std::size_t>(p.seq_len - 1) * p.step_features + p.persistence_feature;
  r.reserve(s.n);
  for (int i = 0; i < s.n; ++i) r.push_back(s.X[static_cast<std::size_t>(i) * p.features + at]);
  return r;
}

}  // namespace tn
