// New history for a trained sequence run (forecasting and eval --data): each series' windows cut
// with the run's window, horizon and stride (rules 1, 3 and 5 of data/sequence.h) over the whole
// new series, and normalized with the statistics the run stored (rule 4), never refitted.
#pragma once
#include <vector>

#include "data/dataset.h"
#include "data/sequence_units.h"

namespace tn {

// The normalization a sequence run stored (/data/normalization): every vector empty when the
// run was not normalized.
struct SeriesNormalization {
  std::vector<float> mean, std;                // [F] over all series, or [Gs, F] per series
  std::vector<float> target_mean, target_std;  // [Gs] (one entry, or one per series)
};

struct SeriesWindows {
  int n = 0;                       // windows
  std::vector<float> X;            // [n, W·F] as the model sees them (rules 4 to 7), time step major (rule 5)
  std::vector<float> y;            // [n] target in model units (windows_to_evaluate only)
  std::vector<int> series;         // [n] the table series of each window
  std::vector<int> last_row;       // [n] table row of the window's last step
  std::vector<int> target_row;     // [n] table row of the target (windows_to_evaluate only)
  TargetUnits units;               // [n] how each output becomes original units (rules 6 and 7)
  NaiveForecasts naive;            // [n] persistence, seasonal naive, drift (rule 8)
};

// For every series g of `table` (its group_by groups, or the whole table), the statistics of
// series stats_of[g] are used (ignored where the run's statistics are pooled: [F] inputs, one
// target entry).

// One window per series, its last W rows: what forecasts the value `horizon` steps after the
// series' last row. A series with fewer than W rows (W + 1 with a transform): DataError naming
// it and both counts.
SeriesWindows windows_to_forecast(const Dataset& table, const SequenceConfig& q, const SeriesNormalization& norm,
                                  const std::vector<int>& stats_of);

// Every window of every series, as training cuts one split's range (t = 0, s, 2s, ... while
// t + W − 1 + h < L; from t = 1 with a transform), with its target from the data. A series with
// fewer than W + h rows (W + h + 1 with a transform): DataError naming it and both counts.
SeriesWindows windows_to_evaluate(const Dataset& table, const SequenceConfig& q, const SeriesNormalization& norm,
                                  const std::vector<int>& stats_of);

}  // namespace tn
