// Windows over series, chronological splits and per-series normalization (rules in sequence.h).
#include "data/sequence.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

namespace tn {
namespace {

constexpr const char* kRangeNames[3] = {"train", "val", "test"};

struct Table {
  const Dataset& d;
  const SequenceConfig& q;
  int G = 1;                 // series
  std::vector<int> cols{};   // X columns of the step features, then of the target
  std::vector<std::vector<int>> series{};  // table rows of each series, in time order

  std::string name(int g) const {
    return d.group_names.empty() ? std::string("the table (one series without data.per_member group_by)")
                                 : "series '" + d.group_names[g] + "'";
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
        throw DataError(row_location(d, rows[i]) + "data.sequence.time: " + t.name(g) + " has two rows at time '" +
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
  const bool transform = q.transform != SeriesTransform::None;
  for (int k = 0; k < 3; ++k) {
    const long len = r.begin[k + 1] - r.begin[k];
    // The series' first point has no change: with a transform the train range holds one less.
    const long need = static_cast<long>(q.window) + q.horizon + (transform && k == 0 ? 1 : 0);
    if (fraction[k] == 0 || len >= need) continue;
    throw DataError(
        "data.sequence: " + t.name(g) + " of " + t.d.origin + " has " +
        std::to_string(r.begin[3]) + " time points, so its " + kRangeNames[k] + " range (split." +
        kRangeNames[k] + " " + short_number(fraction[k]) + ") has " +
        std::to_string(std::max(0L, len)) + "; one window needs window + horizon" +
        (need > q.window + q.horizon ? " + 1 = " : " = ") + std::to_string(need) + " points" +
        (need > q.window + q.horizon ? " (with data.sequence.transform the series' first point only starts the changes)"
                                     : "") +
        ". Lower data.sequence.window or horizon, change data.split, "
        "or give the series more rows");
  }
}

// The windows of series g whose inputs and target lie in points [b, e) (rule 3), scaled by
// offset/scale ([K], or null).
void add_windows(const Table& t, int g, const SeriesValues& v, long b, long e, const float* offset,
                 const float* scale, SplitData& out) {
  const SequenceConfig& q = t.q;
  const std::vector<int>& rows = t.series[g];
  for (long s = std::max<long>(b, v.first); s + q.window - 1 + q.horizon < e; s += q.stride) {
    out.y.push_back(cut_window(v, s, q, offset, scale, {out.X, out.units, out.naive}));
    const int target_row = rows[s + q.window - 1 + q.horizon];
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
  std::vector<Ranges> ranges(t.G);
  std::vector<SeriesValues> values(t.G);
  for (int g = 0; g < t.G; ++g) {
    ranges[g] = split_series(static_cast<long>(t.series[g].size()), cfg.split);
    check_lengths(t, g, ranges[g], cfg);
    values[g] = series_values(d, t.series[g], t.cols, q, t.name(g));
  }

  // Rule 4: each column's statistics over the training range's (changed) values.
  std::vector<float> offset(static_cast<std::size_t>(t.G) * K, 0.0f), scale(offset.size(), 1.0f);
  const bool scaled = cfg.normalize != Normalize::None;
  if (scaled) {
    const bool per_series = cfg.normalize_per_member;
    const auto training_values = [&](int g, int k, std::vector<float>& out) {
      const long first = k < F ? values[g].first : (q.transform == SeriesTransform::None ? 0 : q.horizon);
      for (long i = first; i < ranges[g].begin[1]; ++i) out.push_back(values[g].changed(i, k));
    };
    for (int g = 0; g < t.G; ++g)
      for (int k = 0; k < K; ++k) {
        const std::size_t at = static_cast<std::size_t>(g) * K + k;
        if (per_series || g == 0) {
          std::vector<float> v;
          for (int h = per_series ? g : 0; h < (per_series ? g + 1 : t.G); ++h) training_values(h, k, v);
          fit_scaling(v, cfg.normalize, offset[at], scale[at]);
        } else {
          offset[at] = offset[k], scale[at] = scale[k];
        }
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

  SplitData* splits[3] = {&p.train, &p.val, &p.test};
  for (int k = 0; k < 3; ++k) {
    splits[k]->name = kRangeNames[k];
    for (int g = 0; g < t.G; ++g) {
      const std::size_t at = static_cast<std::size_t>(g) * K;
      add_windows(t, g, values[g], ranges[g].begin[k], ranges[g].begin[k + 1], scaled ? &offset[at] : nullptr,
                  scaled ? &scale[at] : nullptr, *splits[k]);
    }
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
  Table t{.d = d, .q = q};
  t.G = d.group.empty() ? 1 : static_cast<int>(d.group_names.size());
  t.series.resize(t.G);
  for (int r = 0; r < d.n; ++r) t.series[d.group.empty() ? 0 : d.group[r]].push_back(r);
  if (!q.time.empty() && !d.time.empty()) sort_by_time(t);
  return std::move(t.series);
}

}  // namespace tn
