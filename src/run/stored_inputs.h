// The inputs a stored swarm (run/stored_swarm.h) runs on for eval and predict: its own
// splits, rebuilt from the training data and checked against the run, or new data (a CSV with
// the run's columns, a YAML config's data section, or new series of a sequence run)
// preprocessed with the statistics the run stored.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "data/sequence_units.h"
#include "run/command_files.h"
#include "run/stored_swarm.h"

namespace tn {

// Samples to evaluate or predict, preprocessed as in training.
struct Inputs {
  std::string split;   // "test", "val", "train", "all" or "data"
  std::string source;  // for reports: "test split of spirals(n=512)" or the file
  int n = 0;
  std::vector<float> X;  // [n, F] normalized
  std::vector<float> y;  // [n] labels or [n, targets] values; empty for unlabeled inputs
  int batch = 1;         // forward batch rows: the training batch, to reproduce its predictions
  // Each sample's group (group_by; sequence data: its series), and, for sequence data, how its
  // output becomes original units and its naive forecasts (data/sequence_units.h).
  std::vector<int> group;
  std::vector<std::string> group_names;  // the name of each group (series), when the data name them
  TargetUnits units;
  NaiveForecasts naive;
  // new_data with id columns (predict --id): each column's text per sample, [columns][n].
  std::vector<std::string> id_columns;
  std::vector<std::vector<std::string>> ids;
};

// Rebuilds split `split` ("test", "val", "train" or "all") of the run's own data, checking
// that it still matches the run (normalization statistics, classes, stored targets). `run`
// comes from load_swarm_with_own_data. No split named: test, else train (logged). Throws
// UsageError, DataError, ConfigError.
Inputs own_split(const StoredSwarm& run, const std::optional<std::string>& split);

// New data from `file`: a YAML config (its data section, every sample) or a CSV file with
// the run's feature columns by name (sequence runs, labeled only: every window of each series
// of a long-format CSV, run/new_series.h) (and, when `labeled`, its target column: the run's
// CSV target, or "label" for runs on built-in data). Labels are mapped to the run's classes
// by name. `id_columns` are carried through as text (ids). Throws DataError, ConfigError, UsageError.
Inputs new_data(const StoredSwarm& run, const std::string& file, bool labeled,
                const std::vector<std::string>& id_columns = {});

// The files new_data reads from `file`, given by option `key` (predict --input, eval --data):
// the file and, for a YAML config, its data files (run/command_files.h). A config that
// cannot be read adds none; new_data reports it.
std::vector<NamedFile> new_data_files(const std::string& key, const std::string& file);

// The overrides that let a config be read for its data section alone (data generate, a config
// as new data): a placeholder model and loss, and no grid (its keys may be the model's).
std::vector<Override> data_section_overrides();

}  // namespace tn
