// Forecasts of a stored sequence run for new history (`turbanet predict` on sequence runs): each
// series' last window, the value `horizon` steps after its last row, in the target's original
// units; by the series' own member (group_by runs) or by every member and their mean and spread.
#pragma once
#include <string>
#include <vector>

#include "run/stored_swarm.h"

namespace tn {

struct Forecast {
  std::string series_column, time_column;  // the group_by and data.sequence.time columns, or ""
  int horizon = 1;                         // steps after the last row that are forecast
  bool per_group = false;                  // group_by run: one member per series, no ensemble
  int N = 0;                               // series (rows of the output)
  std::vector<std::string> series;         // [N] series key ("" without group_by)
  std::vector<std::string> last_time;      // [N] time of the last row used (empty without time column)
  std::vector<std::string> id_columns;     // predict --id
  std::vector<std::vector<std::string>> ids;  // [columns][N] each column's value at the last row
  std::vector<int> member;                 // per_group: [N] the global member forecasting each series
  std::vector<float> normalized;           // per_group: [N]; else [S, N]: model outputs (trained units)
  std::vector<float> members;              // not per_group: [S, N] every member in original units
  std::vector<float> value;                // [N] the forecast in original units (its member's, or the ensemble mean)
  std::vector<float> std;                  // not per_group: [N] std across members (ddof 0), original units
  std::vector<int> excluded;               // not per_group: local members left out (non-finite outputs)
};

// Reads `input` (new history, run/new_series.h), cuts each series' last window and runs the
// members. Throws DataError (unknown series, too short a series), UsageError, ConfigError.
Forecast forecast_stored(const StoredSwarm& run, const std::string& input, const std::vector<std::string>& id_columns,
                         int threads);

}  // namespace tn
