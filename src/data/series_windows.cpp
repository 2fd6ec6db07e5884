// Windows over new series, normalized with a run's stored statistics (see series_windows.h).
#include "data/series_windows.h"

#include <algorithm>

#include "data/sequence.h"

namespace tn {
namespace {

struct Cutter {
  const Dataset& d;
  const SequenceConfig& q;
  const SeriesNormalization& norm;
  const std::vector<int>& stats_of;
  std::vector<int> cols = sequence_columns(d, q);  // step features, then the target
  std::vector<std::vector<int>> series = series_rows(d, q);
  int F = static_cast<int>(q.features.size());
  int first = q.transform == SeriesTransform::None ? 0 : 1;  // rule 6: the first point has no change

  std::string name(int g) const {
    return d.group_names.empty() ? std::string("the table (one series)") : "series '" + d.group_names[g] + "'";
  }

  void need(int g, long points, const char* what) const {
    const long L = static_cast<long>(series[g].size());
    if (L < points + first)
      throw DataError(d.origin + ": " + name(g) + " has " + std::to_string(L) + " rows, but " + what + " needs " +
                      std::to_string(points + first) + " (data.sequence.window " + std::to_string(q.window) +
                      (points > q.window ? " + horizon " + std::to_string(q.horizon) : std::string()) +
                      (first ? " + 1: data.sequence.transform has no change at the first row" : "") +
                      "); give it more history or leave it out of the file");
  }

  // Series g's values, and the run's statistics for it ([K] offsets and scales; empty: none).
  SeriesValues values(int g, std::vector<float>& offset, std::vector<float>& scale) const {
    offset.clear();
    scale.clear();
    if (!norm.mean.empty()) {
      const std::size_t at = norm.mean.size() == static_cast<std::size_t>(F) ? 0 : static_cast<std::size_t>(stats_of[g]) * F;
      const std::size_t target = norm.target_mean.size() == 1 ? 0 : static_cast<std::size_t>(stats_of[g]);
      offset.assign(norm.mean.begin() + at, norm.mean.begin() + at + F);
      scale.assign(norm.std.begin() + at, norm.std.begin() + at + F);
      offset.push_back(norm.target_mean[target]);
      scale.push_back(norm.target_std[target]);
    }
    return series_values(d, series[g], cols, q, name(g));
  }

  // Appends the window of series g starting at point t; returns its target (NaN past the end).
  float add(int g, const SeriesValues& v, long t, const std::vector<float>& offset, const std::vector<float>& scale,
            SeriesWindows& w) const {
    const float y = cut_window(v, t, q, offset.empty() ? nullptr : offset.data(), scale.empty() ? nullptr : scale.data(),
                               {w.X, w.units, w.naive});
    w.last_row.push_back(series[g][t + q.window - 1]);
    w.series.push_back(g);
    ++w.n;
    return y;
  }
};

}  // namespace

SeriesWindows windows_to_forecast(const Dataset& table, const SequenceConfig& q, const SeriesNormalization& norm,
                                  const std::vector<int>& stats_of) {
  const Cutter c{table, q, norm, stats_of};
  SeriesWindows w;
  std::vector<float> offset, scale;
  for (int g = 0; g < static_cast<int>(c.series.size()); ++g) {
    c.need(g, q.window, "a forecast");
    const SeriesValues v = c.values(g, offset, scale);
    c.add(g, v, v.L - q.window, offset, scale, w);
  }
  return w;
}

SeriesWindows windows_to_evaluate(const Dataset& table, const SequenceConfig& q, const SeriesNormalization& norm,
                                  const std::vector<int>& stats_of) {
  const Cutter c{table, q, norm, stats_of};
  SeriesWindows w;
  std::vector<float> offset, scale;
  for (int g = 0; g < static_cast<int>(c.series.size()); ++g) {
    c.need(g, static_cast<long>(q.window) + q.horizon, "one window with its target");
    const SeriesValues v = c.values(g, offset, scale);
    const std::vector<int>& rows = c.series[g];
    for (long t = v.first; t + q.window - 1 + q.horizon < v.L; t += q.stride) {
      w.y.push_back(c.add(g, v, t, offset, scale, w));
      w.target_row.push_back(rows[t + q.window - 1 + q.horizon]);
    }
  }
  return w;
}

}  // namespace tn
