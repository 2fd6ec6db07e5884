// New history for a stored sequence run (predict, eval --data): a long-format CSV read with the
// run's own data.sequence settings, its series matched by name to the run's members (group_by
// runs) and its windows normalized with the statistics the run stored.
#pragma once
#include <string>
#include <vector>

#include "data/series_windows.h"
#include "run/stored_swarm.h"

namespace tn {

struct NewSeries {
  DataConfig data;            // the run's data section, reading `file`
  Dataset table;              // the long-format table (group, time, ids)
  std::vector<int> stats_of;  // [table series] index into the run's per-series statistics
  std::vector<int> member;    // [table series] group_by runs: the global member trained on it
};

// Reads `file` (a CSV in the training data's long format: the series key column of group_by,
// the time column, the feature and target columns; others ignored, `id_columns` kept as text).
// Throws DataError for a series the run has no member for (naming them), UsageError for a
// YAML file, ConfigError.
NewSeries read_new_series(const StoredSwarm& run, const std::string& file, const std::vector<std::string>& id_columns);

// The normalization statistics the run stored.
SeriesNormalization stored_normalization(const StoredSwarm& run);

}  // namespace tn
