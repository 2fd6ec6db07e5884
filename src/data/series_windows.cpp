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
  int persistence = static_cast<int>(std::find(q.features.begin(), q.features.end(), q.target) - q.features.begin());

  float value(int row, int k) const { return d.X[static_cast<std::size_t>(row) * d.features + cols[k]]; }

  // Input k of `row` in series g, normalized as prepare_sequences does: (x − mean) / std in float.
  float input(int g, int row, int k) const {
    if (norm.mean.empty()) return value(row, k);
    const std::size_t at = (norm.mean.size() == static_cast<std::size_t>(F) ? 0 : static_cast<std::size_t>(stats_of[g]) * F) + k;
    return (value(row, k) - norm.mean[at]) / norm.std[at];
  }

  float target(int g, int row) const {
    if (norm.target_mean.empty()) return value(row, F);
    const std::size_t at = norm.target_mean.size() == 1 ? 0 : static_cast<std::size_t>(stats_of[g]);
    return (value(row, F) - norm.target_mean[at]) / norm.target_std[at];
  }

  std::string name(int g) const {
    return d.group_names.empty() ? std::string("the table (one series)") : "series '" + d.group_names[g] + "'";
  }

  void need(int g, long points, const char* what) const {
    const long L = static_cast<long>(series[g].size());
    if (L < points)
      throw DataError(d.origin + ": " + name(g) + " has " + std::to_string(L) + " rows, but " + what + " needs " +
                      std::to_string(points) + " (data.sequence.window " + std::to_string(q.window) +
                      (points > q.window ? " + horizon " + std::to_string(q.horizon) : std::string()) +
                      "); give it more history or leave it out of the file");
  }

  // Appends the window of series g starting at point t.
  void add(int g, long t, SeriesWindows& w) const {
    const std::vector<int>& rows = series[g];
    for (long i = t; i < t + q.window; ++i)
      for (int k = 0; k < F; ++k) w.X.push_back(input(g, rows[i], k));
    const int last = rows[t + q.window - 1];
    w.last_row.push_back(last);
    w.series.push_back(g);
    if (persistence < F) w.persistence.push_back(input(g, last, persistence));
    ++w.n;
  }
};

}  // namespace

SeriesWindows windows_to_forecast(const Dataset& table, const SequenceConfig& q, const SeriesNormalization& norm,
                                  const std::vector<int>& stats_of) {
  const Cutter c{table, q, norm, stats_of};
  SeriesWindows w;
  for (int g = 0; g < static_cast<int>(c.series.size()); ++g) {
    c.need(g, q.window, "a forecast");
    c.add(g, static_cast<long>(c.series[g].size()) - q.window, w);
  }
  return w;
}

SeriesWindows windows_to_evaluate(const Dataset& table, const SequenceConfig& q, const SeriesNormalization& norm,
                                  const std::vector<int>& stats_of) {
  const Cutter c{table, q, norm, stats_of};
  SeriesWindows w;
  for (int g = 0; g < static_cast<int>(c.series.size()); ++g) {
    c.need(g, static_cast<long>(q.window) + q.horizon, "one window with its target");
    const std::vector<int>& rows = c.series[g];
    const long L = static_cast<long>(rows.size());
    for (long t = 0; t + q.window - 1 + q.horizon < L; t += q.stride) {
      c.add(g, t, w);
      const int target_row = rows[t + q.window - 1 + q.horizon];
      w.target_row.push_back(target_row);
      w.y.push_back(c.target(g, target_row));
    }
  }
  return w;
}

}  // namespace tn
